// Issue 43: the review page's HTML as text (the browser tests, test/browser/, open it): the data
// island cannot end its <script> element, the CSP allows exactly the page's own style and script,
// nothing points outside the page, and the data say what the plan says.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { jsonForScript, planHtml } from "../../src/cli/views/html/page.js";
import { principalType, reviewData, STATE, TYPES } from "../../src/cli/views/html/review-data.js";
import { quickstartPlan } from "./plans.js";

const sha = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

describe("the review page's HTML", () => {
  it("embeds JSON that cannot close its element and reads back the same", () => {
    const value = { a: "</script><script>alert(1)</script>", b: "<!-- & -->", c: "\u2028\u2029", d: 'é"\\' };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it("allows by hash exactly its own style and script, and names nothing outside itself", async () => {
    const plan = await quickstartPlan();
    plan.stack.name = 'x</title><script>alert("t")</script>';
    const html = planHtml(plan, []);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!;
    expect(csp).toContain(`script-src ${sha(script)}`);
    expect(csp).toContain(`style-src ${sha(style)}`);
    expect(csp).toMatch(/^default-src 'none'/);
    expect(html).not.toMatch(/\b(src|href)=/);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain("<title>converge access review: x&#60;/title&#62;&#60;script&#62;alert(&#34;t&#34;)");
    expect(html.match(/<script/g)).toHaveLength(2);
  });

  it("has the plan's grants, revocations with their cause, and principal types", async () => {
    const plan = await quickstartPlan();
    const d = reviewData(plan, []);
    const changes = plan.access_changes!.changes;
    expect(d.head.granted).toBe(changes.filter((c) => c.action === "grant").length);
    expect(d.head.revoked).toBe(1);
    expect(d.revocations.map(([row, cause]) => [d.principals[d.rows[row]![0]]![0], cause])).toEqual([
      ["user:carol@example.com", "granted outside converge: restoreViewers holds the binding authoritatively"],
    ]);
    expect(d.rows.filter((r) => r[4] !== STATE.unchanged)).toHaveLength(changes.length);
    const types = [
      "user:a@x.com",
      "group:g@x.com",
      "serviceAccount:s@p.iam.gserviceaccount.com",
      "domain:x.com",
      "allUsers",
      "principalSet://iam.googleapis.com/locations/global/workforcePools/p/*",
      "deleted:user:a@x.com?uid=1",
    ];
    expect(types.map((p) => TYPES[principalType(p)])).toEqual([
      "users",
      "groups",
      "service accounts",
      "domains",
      "public",
      "workload identity sets",
      "users",
    ]);
  });

  it("marks a reworded condition's members, with the condition before, and flags lookalikes", async () => {
    const plan = await quickstartPlan();
    const delta = plan.access_changes!;
    const before = { title: "old", expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' };
    const after = { ...before, title: "new", description: "reworded" };
    delta.condition_changes = [
      {
        object: "projects/p/o",
        kind: "restorePlan",
        role: "roles/r",
        principals: ["user:r@x.com"],
        before,
        after,
        addresses: ["restoreViewers"],
      },
    ];
    delta.lookalikes = [{ principal: "user:carol@example.com", reasons: ["mixed scripts"], code_points: [] }];
    const d = reviewData(plan, []);
    const row = d.rows.find((r) => r[4] === STATE.reworded)!;
    expect(d.principals[row[0]]![0]).toBe("user:r@x.com");
    expect(d.conditions[row[3]]).toEqual(["new", "reworded", before.expression, "2030-01-01T00:00:00.000Z"]);
    expect(d.conditions[row[6]]![0]).toBe("old");
    expect(d.head.reworded).toBe(1);
    expect(d.lookalikes.map((l) => l[0])).toEqual(["user:carol@example.com"]);
  });
});

describe("the review page's stack file", () => {
  it("is relative to the working directory when below it: a shared page shows no home folder", async () => {
    const plan = await quickstartPlan();
    plan.stack.file = `${process.cwd()}/examples/quickstart/stack.yaml`;
    expect(reviewData(plan, []).head.file).toBe("examples/quickstart/stack.yaml");
    plan.stack.file = "/elsewhere/stack.yaml";
    expect(reviewData(plan, []).head.file).toBe("/elsewhere/stack.yaml");
  });
});
