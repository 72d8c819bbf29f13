// The IAM condition checker against a table written from Google's attribute reference
// (https://cloud.google.com/iam/docs/conditions-attribute-reference) and conditions overview:
// every documented attribute and function is accepted, with its documented types; everything
// else is refused with a message and the offset (0-based, in the expression) it points at.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkCondition } from "../../src/iam/condition-check.js";
import { lintExpression } from "../../src/config/lint-rules.js";
import { conditionExpressionProblem } from "../../src/emulator/conditions.js";

const GOOD = [
  // the quickstart's condition
  'request.time < timestamp("2027-01-01T00:00:00Z")',
  "true",
  // resource attributes
  'resource.service == "compute.googleapis.com"',
  "resource.type != 'compute.googleapis.com/Image'",
  "(resource.type != 'storage.googleapis.com/Bucket' && resource.type != " +
    "'storage.googleapis.com/Object') || resource.name.startsWith('projects/_/buckets/example-bucket')",
  'resource.name.endsWith(".jpg")',
  'resource.name.extract("projects/{project}/") == "project-123"',
  "resource.hasTagKey('123456789012/env')",
  "resource.hasTagKeyId('tagKeys/123456789012')",
  "resource.matchTag('123456789012/env', 'prod')",
  "resource.matchTagId('tagKeys/123456789012', 'tagValues/567890123456')",
  // request attributes
  '"accessPolicies/199923665455/accessLevels/CorpNet" in request.auth.access_levels',
  "api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', " +
    "[]).hasOnly(['roles/pubsub.editor', 'roles/pubsub.publisher'])",
  "api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('logs/')",
  "api.getAttribute('aiplatform.googleapis.com/sessionUserId', 'undefined') == 'alex'",
  'request.time < date("2023-02-01")',
  'timestamp("2024-04-12T14:30:00.00Z") + duration("1800s") > request.time',
  'request.time > timestamp("2024-04-12T14:30:00Z") - duration("5184000s")',
  "request.time.getDate() > 15 && request.time.getDayOfMonth() > 14",
  'request.time.getDayOfWeek("Europe/Berlin") > 0 && request.time.getDayOfWeek("Europe/Berlin") < 6',
  'request.time.getDayOfYear("America/Los_Angeles") >= 0 && request.time.getFullYear() == 2022',
  'request.time.getHours("+01:00") >= 9 && ' +
    'request.time.getMinutes("Europe/Berlin") >= 30 && ' +
    "request.time.getMonth() == 3",
  "request.time.getSeconds() < 30 || request.time.getMilliseconds() < 500",
  'destination.ip == "10.0.0.1" && destination.port > 21 && destination.port <= 23',
  "!compute.isForwardingRuleCreationOperation() || (compute.isForwardingRuleCreationOperation() && " +
    "compute.matchLoadBalancingSchemes(['INTERNAL', 'INTERNAL_MANAGED']))",
  'request.path == "/admin" || request.path.startsWith("/admin") || request.host.endsWith(".example.com")',
  "request.time > timestamp('2018-08-03T16:00:00-07:00') &&\n  request.time < timestamp('2018-08-03T16:05:00-07:00')",
  'resource.name.matches("^projects/[a-z-]+/")',
];

// expression, words the message contains, offset
const BAD: [string, string[], number][] = [
  ["'hello'", ["must be a boolean expression", "string"], 0],
  ["  request.time", ["boolean", "timestamp"], 2],
  ["request.time + 1", ["operator +", "timestamp and int", 'duration("3600s")'], 13],
  ['resource.nme.startsWith("x")', ['unknown attribute "resource.nme"', 'did you mean "resource.name"'], 9],
  ['reqest.time < timestamp("2099-01-01T00:00:00Z")', ['unknown attribute "reqest"', 'did you mean "request"'], 0],
  ['origin.ip == "10.0.0.1"', ['unknown attribute "origin"'], 0],
  ['principal.type == "iam.googleapis.com/ServiceAccount"', ["principal access boundary"], 0],
  ['request.auth.claims.email == "a@example.com"', ['unknown attribute "request.auth.claims"'], 13],
  ["request", ['"request" is not a value', "request.time"], 0],
  ['resource.name.contains("prod")', ["contains() is not a function of string"], 14],
  ["request.time.getHourz() > 9", ["getHourz()", "did you mean getHours()"], 13],
  ["resource.getTag('x')", ["unknown function resource.getTag()"], 9],
  ['size("abc") > 1', ["unknown function size()"], 0],
  ['request.time.getHours("Europe/Berln") >= 9', ['"Europe/Berln" is not a time zone'], 22],
  ['request.time < timestamp("2027-13-01T00:00:00Z")', ['"2027-13-01T00:00:00Z" is not an RFC 3339 timestamp'], 25],
  ['request.time < timestamp("2027-01-01")', ["RFC 3339"], 25],
  ['request.time < date("2027-02-30")', ['"2027-02-30" is not a date'], 20],
  ['request.time < timestamp("2027-01-01T00:00:00Z") + duration("30 days")', ['"30 days" is not a duration'], 60],
  ['resource.name.extract("projects/") == ""', ["extraction template"], 22],
  ["resource.matchTagId('123/env', 'prod')", ["permanent tag ID (tagKeys/…)"], 20],
  ["resource.hasTagKey('env')", ["namespaced tag key"], 19],
  ['destination.port == "22"', ["operator ==", "int and string"], 17],
  ['request.time.getHours() == "9"', ["int and string"], 24],
  ["resource.name.startsWith(1)", ["startsWith() expects string, not int"], 25],
  ["request.host.endsWith()", ["endsWith() takes 1 argument (string), not 0"], 13],
  ['request.time.getHours("UTC", 1) > 1', ["takes 1 argument (string), not 2"], 13],
  ['request.auth.access_levels.exists(l, l == "x")', ["exists() is not supported", "no macros"], 27],
  ["has(request.time)", ["has() is not supported"], 0],
  [
    "api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', ['x']).hasOnly([])",
    ["must be an empty list ([])"],
    60,
  ],
  ["api.getAttribute('storage.googleapis.com/objectListPrefix', 1) == 1", ["must be string, not int"], 60],
  ["api.getAttribute(1, '') == ''", ["attribute name as a string"], 17],
  ["api.getAttribute('x') == ''", ["takes an attribute name and a default value"], 4],
  ["api == 1", ['"api" is not a value', "api.getAttribute()"], 0],
  ['"a" in request.auth.access_levels == 1', ["operator ==", "bool and int"], 34],
  ["1 in request.auth.access_levels", ["operator in", "int and list(string)"], 2],
  ["compute.matchLoadBalancingSchemes([1])", ["expects list(string), not list(int)"], 34],
  ['[1, "a"] == []', ["list elements must have one type"], 4],
  ["destination.port && true", ["operator && takes booleans, not int"], 0],
  ['request.time < timestamp("2027-01-01T00:00:00Z") &&\n  request.time <', ["not valid CEL"], 67],
  ["request.time <", ["not valid CEL"], 13],
  ["", ["not valid CEL"], 0],
  ["google.iam.Foo{a: 1}", ["is not supported in IAM conditions"], 0],
  // names of Object.prototype are not attributes or functions
  ["constructor == 1", ['unknown attribute "constructor"'], 0],
  ["request.toString == 1", ['unknown attribute "request.toString"'], 8],
  ["'x'.constructor() == 1", ["constructor() is not a function of string"], 4],
  ["resource.hasOwnProperty('x')", ["unknown function resource.hasOwnProperty()"], 9],
];

describe("checkCondition", () => {
  it.each(GOOD)("accepts %s", (expression) => {
    expect(checkCondition(expression)).toBeUndefined();
  });

  it.each(BAD)("refuses %j", (expression, words, offset) => {
    const p = checkCondition(expression);
    expect(p, "refused").toBeDefined();
    for (const w of words) expect(p!.message).toContain(w);
    expect(p!.offset).toBe(offset);
  });
});

describe("malformed literals", () => {
  it("are marked as never granting (Google accepts them), type errors are not", () => {
    expect(checkCondition('request.time < timestamp("soon")')).toMatchObject({ neverGrants: true });
    expect(checkCondition('request.time.getHours("Mars/Olympus") > 1')).toMatchObject({ neverGrants: true });
    expect(checkCondition("request.time + 1")!.neverGrants).toBeUndefined();
  });

  it("say so in the lint finding", () => {
    const now = new Date("2026-11-22T00:00:00Z");
    expect(lintExpression('request.time < timestamp("soon")', now)[0]!.detail).toBe(
      "Google accepts it, but the condition can never grant access.",
    );
    expect(lintExpression("request.time + 1", now)[0]!.detail).toContain("Google refuses it");
  });
});

describe("lintExpression (what the stack lint sees)", () => {
  const now = new Date("2026-11-22T00:00:00Z");

  it.each(BAD)("reports %j as invalid-condition at its offset", (expression, words, offset) => {
    const found = lintExpression(expression, now);
    expect(found.map((f) => f.rule)).toEqual(["invalid-condition"]);
    expect(found[0]!.offset).toBe(offset);
    expect(found[0]!.summary).toContain(words[0]);
  });

  it("accepts every good expression, and still finds expired ones", () => {
    for (const g of GOOD)
      expect(
        lintExpression(g, now).filter((f) => f.rule === "invalid-condition"),
        g,
      ).toEqual([]);
    expect(lintExpression('request.time < timestamp("2020-01-01T00:00:00Z")', now).map((f) => f.rule)).toEqual([
      "expired-condition",
    ]);
  });
});

describe("the client's checker and the emulator's (written independently) agree on types", () => {
  // Generated expressions over every kind of value; literals are well-formed, so only types decide.
  const terms = [
    "request.time",
    "timestamp('2027-01-01T00:00:00Z')",
    "duration('60s')",
    "resource.name",
    "'x'",
    "1",
    "2u",
    "1.5",
    "true",
    "null",
    "b'x'",
    "destination.port",
    "request.auth.access_levels",
    "['a']",
    "[]",
    "[1]",
    "{'a': 'b'}",
    "{}",
    "api.getAttribute('k', [])",
    "api.getAttribute('k', '')",
    "api.getAttribute('k', {})",
    "request.time.getHours()",
    "resource.name.extract('a/{b}/')",
    "resource.matchTag('1/e', 'p')",
  ];
  const expr = fc.letrec((tie) => ({
    e: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constantFrom(...terms),
      fc
        .tuple(tie("e"), fc.constantFrom("+", "-", "*", "/", "%", "==", "!=", "<", ">=", "&&", "||", "in"), tie("e"))
        .map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(tie("e"), tie("e")).map(([a, b]) => `${a}[${b}]`),
      tie("e").map((a) => `!${a}`),
      tie("e").map((a) => `-${a}`),
      fc.tuple(tie("e"), tie("e"), tie("e")).map(([a, b, c]) => `(${a} ? ${b} : ${c})`),
      fc
        .tuple(tie("e"), fc.constantFrom("startsWith", "endsWith", "hasOnly", "getHours"), tie("e"))
        .map(([a, f, b]) => `${a}.${f}(${b})`),
    ),
  })).e as fc.Arbitrary<string>;

  it("an expression the emulator refuses is refused by the client, and the other way round", () => {
    fc.assert(
      fc.property(expr, (e) => {
        expect(checkCondition(e) !== undefined, e).toBe(conditionExpressionProblem(e) !== undefined);
      }),
      { numRuns: 1500 },
    );
  });
});
