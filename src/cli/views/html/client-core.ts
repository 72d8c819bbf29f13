// The review page's script, first half: the data, DOM helpers, the verdict header, the
// revocations, lookalikes, guardrails and lint. Every value is put in the page as text
// (textContent, setAttribute): the script never parses data as HTML. Plain ES2017, no imports.
export const CLIENT_CORE = String.raw`
var D = JSON.parse(document.getElementById("review-data").textContent);
var STATE_NAMES = ["unchanged", "added", "revoked", "condition reworded"];
var MARKS = ["=", "+", "\u2212", "~"];
var TYPES = ["users", "groups", "service accounts", "domains", "public", "workload identity sets", "other"];
var app = document.getElementById("app");

function el(tag, attrs, kids) {
  var e = document.createElement(tag);
  if (attrs) for (var k in attrs) {
    if (attrs[k] === undefined || attrs[k] === null) continue;
    if (k === "class") e.className = attrs[k];
    else if (k === "text") e.textContent = String(attrs[k]);
    else e.setAttribute(k, String(attrs[k]));
  }
  if (kids) for (var i = 0; i < kids.length; i++) {
    var c = kids[i];
    if (c === undefined || c === null || c === false) continue;
    e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
function headRow(names) {
  return el("thead", null, [el("tr", null, names.map(function (t) { return el("th", { text: t }); }))]);
}
function plural(n, one, many) { return n.toLocaleString("en-US") + " " + (n === 1 ? one : many); }

var flagged = {};
for (var li = 0; li < D.lookalikes.length; li++) flagged[D.lookalikes[li][0]] = D.lookalikes[li][1];

/** A condition as text: its title, then its expiry (relative to when the plan was made). */
function conditionText(ci) {
  if (ci < 0) return "";
  var c = D.conditions[ci];
  var text = "if \u201c" + c[0] + "\u201d";
  if (c[3]) text += (Date.parse(c[3]) <= Date.parse(D.head.made) ? " (expired " : " (expires ") + c[3] + ")";
  return text;
}
function conditionTitle(ci) {
  if (ci < 0) return null;
  var c = D.conditions[ci];
  return (c[1] ? c[1] + "\n" : "") + c[2];
}
function principalCell(p) {
  var name = D.principals[p][0];
  var b = el("button", { class: "link mono", type: "button", "data-open-principal": p, text: name });
  if (flagged[name] === undefined) return b;
  return el("span", null, [b, " ", el("span", { class: "flag", title: flagged[name], text: "\u26a0 lookalike" })]);
}
function objectCell(o) {
  var attrs = { class: "link mono", type: "button", "data-open-object": o, text: D.objects[o][0],
    title: D.objects[o][1] };
  return el("button", attrs);
}

function tile(cls, key, n, label) {
  var shown = typeof n === "number" ? n.toLocaleString("en-US") : n;
  return el("div", { class: "tile " + cls, "data-count": key }, [el("b", { text: shown }), label]);
}

function renderHeader() {
  var h = D.head, n = h.counts;
  var verdict = h.revoked ? "Some access is revoked"
    : h.granted ? "Access is only granted" : "Nobody gains or loses a role";
  var g = D.guardrails, failed = g ? g.results.length : 0;
  var errors = D.lint.filter(function (d) { return d.severity === "error"; }).length;
  app.appendChild(el("header", { id: "verdict" }, [
    el("h1", null, ["Access review: ", el("code", { text: h.stack })]),
    el("div", { class: "meta" }, [
      "Plan made " + h.made + " against " + h.endpoint + (h.target ? " (" + h.target + ")" : "") + " from " + h.file +
      " by converge " + h.version + (h.digest ? "; digest " + h.digest : "; not sealed (no digest)"),
    ]),
    el("p", { id: "verdict-text" }, [el("b", { text: verdict + "." }),
      " " + plural(h.principals, "principal", "principals") + " and " + plural(h.objects, "object", "objects") +
      " affected; " + n.import + " to import, " + n.add + " to add, " +
      n.change + " to change, " + n.destroy + " to destroy."]),
    el("div", { class: "verdict" }, [
      tile("add", "granted", h.granted, "granted"), tile("rev", "revoked", h.revoked, "revoked"),
      tile("chg", "reworded", h.reworded, "conditions reworded"), tile("", "principals", h.principals, "principals"),
      tile("", "objects", h.objects, "objects"),
      tile(failed ? "rev" : "add", "guardrails", g ? failed : "\u2013",
        g ? "guardrail results of " + g.rules + " rules" : "no guardrails"),
      tile(errors ? "rev" : D.lint.length ? "chg" : "add", "lint", D.lint.length, "lint findings"),
    ]),
    h.incomplete.length
      ? el("p", { class: "warn", text: "Known only after apply for: " + h.incomplete.join(", ") }) : null,
  ]));
}

var REVOCATIONS_SHOWN = 200;
function renderRevocations() {
  var sec = el("section", { id: "revocations" }, [el("h2", { text: "Revocations (" + D.revocations.length + ")" })]);
  app.appendChild(sec);
  if (!D.revocations.length) { sec.appendChild(el("p", { text: "Nobody loses a role." })); return; }
  var body = el("tbody");
  var table = el("table", null, [headRow(["Principal", "Role", "Condition", "Object", "Cause"]), body]);
  var more = el("button", { type: "button", id: "revocations-more" });
  var shown = 0;
  function show(upTo) {
    for (; shown < Math.min(upTo, D.revocations.length); shown++) {
      var v = D.revocations[shown], r = D.rows[v[0]];
      body.appendChild(el("tr", { "data-row": v[0] }, [
        el("td", null, [principalCell(r[0])]), el("td", { class: "mono", text: D.roles[r[1]] }),
        el("td", { text: conditionText(r[3]), title: conditionTitle(r[3]) }), el("td", null, [objectCell(r[2])]),
        el("td", { text: v[1] })]));
    }
    more.hidden = shown >= D.revocations.length;
    var left = D.revocations.length - shown;
    more.textContent = "Show " + Math.min(REVOCATIONS_SHOWN, left) + " more of " + left;
  }
  more.addEventListener("click", function () { show(shown + REVOCATIONS_SHOWN); });
  sec.appendChild(el("div", { class: "scroll" }, [table]));
  sec.appendChild(more);
  show(REVOCATIONS_SHOWN);
}

function renderLookalikes() {
  if (!D.lookalikes.length) return;
  app.appendChild(el("section", { id: "lookalikes" }, [el("h2", { text: "Principals that look like others" }),
    el("ul", null, D.lookalikes.map(function (l) {
      return el("li", null, [el("code", { text: l[0] }), " " + l[1]]);
    }))]));
}

function renderChecks() {
  var g = D.guardrails;
  var sec = el("section", { id: "checks" }, [el("h2", { text: "Guardrails" })]);
  if (!g) sec.appendChild(el("p", { text: "No guardrails are configured." }));
  else if (!g.results.length) sec.appendChild(el("p", { class: "ok", text: "All " + g.rules + " rules passed." }));
  else {
    var head = ["Rule", "Enforcement", "Change", "Principal", "Role", "Object", "Resource", "Error"];
    var body = el("tbody", null, g.results.map(function (r) {
      return el("tr", null, r.map(function (v) { return el("td", { class: "mono", text: v }); }));
    }));
    sec.appendChild(el("div", { class: "scroll" }, [el("table", null, [headRow(head), body])]));
  }
  sec.appendChild(el("h2", { text: "Lint" }));
  if (!D.lint.length) sec.appendChild(el("p", { class: "ok", text: "No findings." }));
  else sec.appendChild(el("ul", null, D.lint.map(function (d) {
    return el("li", { class: d.severity === "error" ? "bad" : "warn" }, [d.severity + ": ",
      d.where ? el("code", { text: d.where }) : null,
      " " + d.summary + (d.detail ? " \u2014 " + d.detail : "")]);
  })));
  app.appendChild(sec);
}
`;
