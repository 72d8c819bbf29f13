// The review page's script, second half: the filters (on indexes built once: lower-cased names,
// rows by principal and by object), the access matrix, paged in both directions so that only a
// page of cells is ever in the DOM, and the per-principal and per-object views.
export const CLIENT_VIEWS = String.raw`
var ROWS_PER_PAGE = 50, COLS_PER_PAGE = 12;
var lower = function (t) { return t.map(function (v) { return (typeof v === "string" ? v : v[0]).toLowerCase(); }); };
var IDX = { p: lower(D.principals), r: lower(D.roles), o: lower(D.objects), byP: [], byO: [] };
D.principals.forEach(function () { IDX.byP.push([]); });
D.objects.forEach(function () { IDX.byO.push([]); });
D.rows.forEach(function (r, i) { IDX.byP[r[0]].push(i); IDX.byO[r[2]].push(i); });
function order(n, cmp) { var a = []; for (var i = 0; i < n; i++) a.push(i); return a.sort(cmp); }
var P_ORDER = order(D.principals.length, function (a, b) {
  return D.principals[a][1] - D.principals[b][1] || (IDX.p[a] < IDX.p[b] ? -1 : IDX.p[a] > IDX.p[b] ? 1 : 0);
});
var O_ORDER = order(D.objects.length, function (a, b) {
  return IDX.o[a] < IDX.o[b] ? -1 : IDX.o[a] > IDX.o[b] ? 1 : 0;
});
var view = { mask: new Uint8Array(D.rows.length), principals: [], objects: [], rowPage: 0, colPage: 0, matched: 0 };

/** Which entries of a table a filter keeps: null (all) for an empty filter; an exact name keeps
 *  only itself, other text every name that contains it. */
function keep(names, text) {
  var t = text.trim().toLowerCase();
  if (!t) return null;
  var out = new Uint8Array(names.length), exact = names.indexOf(t);
  if (exact >= 0) { out[exact] = 1; return out; }
  for (var i = 0; i < names.length; i++) if (names[i].indexOf(t) >= 0) out[i] = 1;
  return out;
}

var F = {};
function applyFilters() {
  var kp = keep(IDX.p, F.principal.value), kr = keep(IDX.r, F.role.value), ko = keep(IDX.o, F.object.value);
  var change = F.change.value, rows = D.rows, mask = view.mask, seenP = new Uint8Array(D.principals.length);
  var seenO = new Uint8Array(D.objects.length), matched = 0;
  for (var i = 0; i < rows.length; i++) {
    var r = rows[i], s = r[4];
    var ok = (!kp || kp[r[0]]) && (!kr || kr[r[1]]) && (!ko || ko[r[2]]) &&
      (change === "all" || (change === "changed" ? s !== 0 : String(s) === change));
    mask[i] = ok ? 1 : 0;
    if (ok) { matched++; seenP[r[0]] = 1; seenO[r[2]] = 1; }
  }
  view.principals = P_ORDER.filter(function (p) { return seenP[p]; });
  view.objects = O_ORDER.filter(function (o) { return seenO[o]; });
  view.matched = matched; view.rowPage = 0; view.colPage = 0;
  renderMatrix();
}

function chip(i) {
  var r = D.rows[i];
  var before = r[4] === 3 && r[6] >= 0 ? " (was " + conditionText(r[6]) + ")" : "";
  return el("span", { class: "chip s" + r[4], "data-row": i, "data-state": STATE_NAMES[r[4]],
    "data-role": D.roles[r[1]], title: STATE_NAMES[r[4]] + (r[5] >= 0 ? " by " + D.addresses[r[5]] : "") +
      (r[3] >= 0 ? "\n" + conditionTitle(r[3]) : ""),
    text: MARKS[r[4]] + " " + D.roles[r[1]] + (r[3] >= 0 ? " " + conditionText(r[3]) : "") + before });
}

var M = {};
function renderMatrix() {
  var ps = view.principals, os = view.objects;
  var rp = Math.max(1, Math.ceil(ps.length / ROWS_PER_PAGE)), cp = Math.max(1, Math.ceil(os.length / COLS_PER_PAGE));
  var pagePs = ps.slice(view.rowPage * ROWS_PER_PAGE, (view.rowPage + 1) * ROWS_PER_PAGE);
  var pageOs = os.slice(view.colPage * COLS_PER_PAGE, (view.colPage + 1) * COLS_PER_PAGE);
  M.count.textContent = plural(view.matched, "grant matches", "grants match") + ": " +
    plural(ps.length, "principal", "principals") +
    " \u00d7 " + plural(os.length, "object", "objects");
  M.rowInfo.textContent = "principals " + (ps.length ? view.rowPage * ROWS_PER_PAGE + 1 : 0) + "\u2013" +
    (view.rowPage * ROWS_PER_PAGE + pagePs.length) + " of " + ps.length;
  M.colInfo.textContent = "objects " + (os.length ? view.colPage * COLS_PER_PAGE + 1 : 0) + "\u2013" +
    (view.colPage * COLS_PER_PAGE + pageOs.length) + " of " + os.length;
  M.prevRows.disabled = view.rowPage === 0; M.nextRows.disabled = view.rowPage >= rp - 1;
  M.prevCols.disabled = view.colPage === 0; M.nextCols.disabled = view.colPage >= cp - 1;
  var col = {};
  pageOs.forEach(function (o, j) { col[o] = j; });
  var head = el("tr", null, [el("th", { text: "Principal \\ object" })].concat(pageOs.map(function (o) {
    return el("th", { "data-object": D.objects[o][0] }, [objectCell(o)]);
  })));
  var body = el("tbody"), type = -1;
  pagePs.forEach(function (p) {
    if (D.principals[p][1] !== type) {
      type = D.principals[p][1];
      body.appendChild(el("tr", { class: "group" }, [el("th", { colspan: pageOs.length + 1, text: TYPES[type] })]));
    }
    var cells = pageOs.map(function () { return el("td"); });
    IDX.byP[p].forEach(function (i) {
      if (view.mask[i] && col[D.rows[i][2]] !== undefined) cells[col[D.rows[i][2]]].appendChild(chip(i));
    });
    var th = el("th", { class: "p" }, [principalCell(p)]);
    body.appendChild(el("tr", { "data-principal": D.principals[p][0] }, [th].concat(cells)));
  });
  clear(M.table).appendChild(el("thead", null, [head]));
  M.table.appendChild(body);
  app.setAttribute("data-renders", String(Number(app.getAttribute("data-renders") || 0) + 1));
}

function pageButton(text, id, move) {
  var b = el("button", { type: "button", id: id, text: text });
  b.addEventListener("click", function () { move(); renderMatrix(); });
  return b;
}

function renderMatrixSection() {
  F.principal = el("input", { id: "filter-principal", type: "search", placeholder: "user:alice@example.com" });
  F.role = el("input", { id: "filter-role", type: "search", placeholder: "roles/viewer" });
  F.object = el("input", { id: "filter-object", type: "search", placeholder: "object name" });
  var changes = [["all", "every grant"], ["changed", "changed"], ["1", "added"], ["2", "revoked"],
    ["3", "condition reworded"], ["0", "unchanged"]];
  F.change = el("select", { id: "filter-change" }, changes.map(function (o) {
    return el("option", { value: o[0], text: o[1] });
  }));
  [F.principal, F.role, F.object].forEach(function (i) { i.addEventListener("input", applyFilters); });
  F.change.addEventListener("change", applyFilters);
  M.count = el("p", { id: "match-count" }); M.rowInfo = el("span"); M.colInfo = el("span");
  M.prevRows = pageButton("\u2191 principals", "rows-prev", function () { view.rowPage--; });
  M.nextRows = pageButton("principals \u2193", "rows-next", function () { view.rowPage++; });
  M.prevCols = pageButton("\u2190 objects", "cols-prev", function () { view.colPage--; });
  M.nextCols = pageButton("objects \u2192", "cols-next", function () { view.colPage++; });
  M.table = el("table", { id: "matrix" });
  var label = function (t, i) { return el("label", null, [t, i]); };
  app.appendChild(el("section", { id: "access" }, [el("h2", { text: "Access after apply" }),
    el("p", { class: "legend meta" }, MARKS.map(function (m, s) {
      return el("span", { class: "s" + s, text: m + " " + STATE_NAMES[s] });
    }).concat(["Unchanged: grants the stack's resources hold; grants made outside converge that the plan " +
      "leaves alone are not shown."])),
    el("div", { class: "filters" }, [label("Principal", F.principal), label("Role", F.role), label("Object", F.object),
      label("Change", F.change)]),
    M.count, el("div", { class: "pager" }, [M.prevRows, M.rowInfo, M.nextRows, M.prevCols, M.colInfo, M.nextCols]),
    el("div", { class: "scroll" }, [M.table])]));
}
`;
