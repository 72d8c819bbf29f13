// The emulator refuses condition expressions Google refuses, over raw HTTP: setIamPolicy answers
// 400 INVALID_ARGUMENT in Google's envelope, with CEL's `ERROR: <input>:LINE:COL: …` and a
// BadRequest field violation on the expression, and leaves the policy alone. Expressions from
// Google's attribute reference are accepted. The table is written from that reference, not from
// the client's checker.
import { describe, expect, it } from "vitest";
import { EP_OPEN, RP_OPEN, expectEnvelope, useSeededEmulator } from "./helpers.js";

const { c } = useSeededEmulator({ resetEach: true });

const withCondition = (expression: string) => ({
  policy: {
    version: 3,
    bindings: [
      { role: "roles/gkebackup.admin", members: ["user:oncall@example.com"], condition: { title: "t", expression } },
    ],
  },
});

// expression, then what the error message says (CEL's location and wording)
const REFUSED: [string, string[]][] = [
  ["'hello'", ["<input>:1:1:", "expected type 'bool' but found 'string'"]],
  [
    "request.time + 1",
    ["<input>:1:14:", "found no matching overload for '_+_' applied to '(google.protobuf.Timestamp, int)'"],
  ],
  ['resource.nme.startsWith("x")', ["undeclared reference to 'resource.nme'"]],
  ['origin.ip == "10.0.0.1"', ["undeclared reference to 'origin.ip'"]],
  ['resource.name.contains("prod")', ["<input>:1:15:", "undeclared reference to 'contains'"]],
  ['destination.port == "22"', ["<input>:1:18:", "'_==_' applied to '(int, string)'"]],
  ['request.auth.access_levels.exists(l, l == "x")', ["@not_strictly_false"]],
  ["has(request.time)", ["undeclared reference to 'has'"]],
  ['request.time.getHours() == "9"', ["'_==_' applied to '(int, string)'"]],
  ["request.time.getHours(1) > 9", ["'getHours' applied to 'google.protobuf.Timestamp.(int)'"]],
  ["resource.matchTag('123/env') ", ["'resource.matchTag' applied to '(string)'"]],
  ["compute.matchLoadBalancingSchemes('INTERNAL')", ["applied to '(string)'"]],
  ['principal.subject.endsWith("@example.com")', ["undeclared reference to 'principal.subject'"]],
  ["request.time <", ["<input>:1:14:", "Syntax error"]],
  ["constructor == 1", ["undeclared reference to 'constructor'"]],
  ["resource.toString() == 'x'", ["undeclared reference to 'resource'"]],
  [
    'request.time < timestamp("2027-01-01T00:00:00Z") &&\n  request.host',
    ["<input>:1:", "'_&&_' applied to '(bool, string)'"],
  ],
  [
    "request.time < timestamp('2027-01-01T00:00:00Z') &&\n  resource.nme == 'x'",
    ["<input>:2:12:", "undeclared reference to 'resource.nme'"],
  ],
];

const ACCEPTED = [
  'request.time < timestamp("2027-01-01T00:00:00Z")',
  "true",
  'resource.service == "compute.googleapis.com" && resource.type != "compute.googleapis.com/Image"',
  'resource.name.startsWith("projects/_/buckets/b") || ' +
    'resource.name.endsWith(".jpg") || resource.name.extract("projects/{p}/") == "x"',
  "resource.matchTag('123456789012/env', 'prod') && resource.hasTagKey('123456789012/env') && " +
    "resource.matchTagId('tagKeys/1', 'tagValues/2') && resource.hasTagKeyId('tagKeys/1')",
  "'accessPolicies/199923665455/accessLevels/CorpNet' in request.auth.access_levels",
  "api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', []).hasOnly(['roles/pubsub.editor'])",
  'request.time < date("2023-02-01") || timestamp("2024-04-12T14:30:00Z") + duration("1800s") > request.time',
  'request.time.getDayOfWeek("Europe/Berlin") >= 1 && ' +
    "request.time.getHours() <= 17 && request.time.getFullYear() == 2027",
  'destination.ip == "10.0.0.1" && destination.port < 3001',
  "!compute.isForwardingRuleCreationOperation() || compute.matchLoadBalancingSchemes(['INTERNAL', 'INTERNAL_MANAGED'])",
  'request.host.endsWith(".example.com") && request.path.startsWith("/admin")',
  // Google accepts a malformed literal: such a condition never grants access, but is not refused.
  'request.time < timestamp("not a time")',
];

describe("setIamPolicy with a condition Google refuses", () => {
  it.each(REFUSED)("answers 400 INVALID_ARGUMENT for %j", async (expression, words) => {
    const before = await c.getRestorePlan(RP_OPEN);
    const r = await c.setRestorePlan(RP_OPEN, withCondition(expression));
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    const message: string = r.json.error.message;
    expect(message).toContain("Condition expression of policy.bindings[0] is invalid: ERROR: <input>:");
    for (const w of words) expect(message).toContain(w);
    const violation = r.json.error.details.find(
      (d: { "@type": string }) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest",
    );
    expect(violation.fieldViolations[0].field).toBe("policy.bindings[0].condition.expression");
    expect((await c.getRestorePlan(RP_OPEN)).json).toEqual(before.json);
  });

  it("refuses it on endpoints too, and in any binding of the policy", async () => {
    const policy = {
      version: 3,
      bindings: [
        { role: "roles/aiplatform.user", members: ["user:a@example.com"] },
        {
          role: "roles/aiplatform.viewer",
          members: ["user:b@example.com"],
          condition: { title: "t", expression: "request.time + 1" },
        },
      ],
    };
    const r = await c.setEndpoint(EP_OPEN, { policy });
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain("policy.bindings[1]");
  });
});

describe("setIamPolicy with conditions from Google's attribute reference", () => {
  it.each(ACCEPTED)("accepts %j", async (expression) => {
    const r = await c.setRestorePlan(RP_OPEN, withCondition(expression));
    expect(r.status, r.text).toBe(200);
    expect(r.json.bindings[0].condition.expression).toBe(expression);
  });
});
