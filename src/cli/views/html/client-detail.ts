// The review page's script, last part: the per-principal view (before → after on every object),
// the per-object view (the policy diff keyed by role and condition, each condition with its
// expiry), opened from any principal or object name, and the page's start.
export const CLIENT_DETAIL = String.raw`
var detail;
function beforeAfter(rows) {
  var before = [], after = [];
  rows.forEach(function (i) {
    var r = D.rows[i], role = D.roles[r[1]];
    var was = r[4] === 3 ? r[6] : r[3];
    if (r[4] !== 1) before.push(role + (was >= 0 ? " " + conditionText(was) : ""));
    if (r[4] !== 2) after.push(MARKS[r[4]] + " " + role + (r[3] >= 0 ? " " + conditionText(r[3]) : ""));
  });
  return [before, after];
}
function lines(list) {
  return list.length ? list.map(function (t) { return el("span", { class: "chip", text: t }); }) : ["\u2013"];
}

function openPrincipal(p) {
  var byObject = {};
  IDX.byP[p].forEach(function (i) { (byObject[D.rows[i][2]] = byObject[D.rows[i][2]] || []).push(i); });
  var name = D.principals[p][0];
  var rows = O_ORDER.filter(function (o) { return byObject[o]; }).map(function (o) {
    var ba = beforeAfter(byObject[o]);
    return el("tr", null, [el("td", null, [objectCell(o)]), el("td", null, lines(ba[0])),
      el("td", null, lines(ba[1]))]);
  });
  show("principal", [el("h2", null, ["Principal ", el("code", { text: name })]),
    flagged[name] !== undefined ? el("p", { class: "flag", text: "\u26a0 " + flagged[name] }) : null,
    el("div", { class: "scroll" }, [el("table", null, [el("thead", null, [el("tr", null, [el("th", { text: "Object" }),
      el("th", { text: "Before" }), el("th", { text: "After" })])]), el("tbody", null, rows)])])]);
}

function openObject(o) {
  var bindings = {}, keys = [];
  IDX.byO[o].forEach(function (i) {
    var r = D.rows[i], k = D.roles[r[1]] + "\u0000" + r[3];
    if (!bindings[k]) { bindings[k] = []; keys.push(k); }
    bindings[k].push(i);
  });
  keys.sort();
  var parts = keys.map(function (k) {
    var first = D.rows[bindings[k][0]], c = first[3];
    var members = bindings[k].map(function (i) {
      var r = D.rows[i];
      var was = r[4] === 3 && r[6] >= 0 ? " (reworded from " + conditionText(r[6]) + ")" : "";
      return el("li", { class: "mono s" + r[4] }, [MARKS[r[4]] + " ", D.principals[r[0]][0] + was]);
    });
    var cond = c >= 0 ? el("div", { class: "meta" }, [conditionText(c), el("br"),
      el("code", { text: D.conditions[c][2] }),
      D.conditions[c][1] ? el("div", { text: D.conditions[c][1] }) : null]) : null;
    var role = D.roles[first[1]];
    return el("div", { class: "panel", "data-binding": role }, [el("h3", { class: "mono", text: role }), cond,
      el("ul", null, members)]);
  });
  show("object", [el("h2", null, ["Object ", el("code", { text: D.objects[o][0] })]),
    el("p", { class: "meta", text: D.objects[o][1] })]
    .concat(parts));
}

function show(what, kids) {
  clear(detail).hidden = false;
  detail.setAttribute("data-view", what);
  var close = el("button", { type: "button", id: "detail-close", text: "Close" });
  close.addEventListener("click", function () { detail.hidden = true; });
  detail.appendChild(close);
  kids.forEach(function (k) { if (k) detail.appendChild(k); });
  detail.scrollIntoView();
}

function main() {
  renderHeader();
  renderRevocations();
  renderLookalikes();
  renderMatrixSection();
  detail = el("section", { id: "detail", class: "panel", hidden: "" });
  app.appendChild(detail);
  renderChecks();
  app.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target.closest("[data-open-principal],[data-open-object]") : null;
    if (!t) return;
    if (t.hasAttribute("data-open-principal")) openPrincipal(Number(t.getAttribute("data-open-principal")));
    else openObject(Number(t.getAttribute("data-open-object")));
  });
  applyFilters();
  app.setAttribute("data-ready", "1");
}
main();
`;
