// Guardrail rules checked at load (src/guardrails/compile.ts, rules.ts): CEL syntax, names and
// types, each problem at its offset, and a rules file's problems at their line and column.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileCondition, isProblem } from "../../src/guardrails/compile.js";
import { loadRuleSet } from "../../src/guardrails/rules.js";
import { expiryOf, memberOf } from "../../src/guardrails/values.js";
import { SourceDocument } from "../../src/yaml/source.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";

const dir = mkdtempSync(join(tmpdir(), "converge-guardrails-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const problem = (expression: string) => {
  const c = compileCondition(expression);
  if (!isProblem(c)) throw new Error(`${expression} compiled`);
  return c;
};

describe("rule conditions at load", () => {
  it("a type error is found at its operator, an unknown name with a suggestion", () => {
    expect(problem("role + 1 == 2")).toMatchObject({
      message: expect.stringContaining("no matching overload"),
      offset: 5,
    });
    expect(problem("membr.domain == 'x'")).toMatchObject({
      message: expect.stringContaining("did you mean member?"),
      offset: 0,
    });
    expect(problem("member.emial == 'x'").message).toContain("member has no field emial; did you mean email?");
    expect(problem("role").message).toContain("must be a boolean");
    expect(problem("role ==").message).toContain("not valid CEL");
  });

  it("comprehension variables are names too, and a missing key depends on the data", () => {
    expect(isProblem(compileCondition("policy.members.exists(m, m.startsWith('deleted:'))"))).toBe(false);
    expect(isProblem(compileCondition("size(policy.roles['roles/other']) > 1"))).toBe(false);
  });

  it("principals and expiries as rules see them", () => {
    expect(memberOf("user:Ana@Example.com")).toEqual({
      id: "user:Ana@Example.com",
      type: "user",
      email: "Ana@Example.com",
      domain: "example.com",
    });
    expect(memberOf("deleted:serviceAccount:x@p.iam.gserviceaccount.com?uid=1")).toMatchObject({
      type: "deleted:serviceAccount",
      domain: "p.iam.gserviceaccount.com",
    });
    expect(memberOf("allUsers")).toEqual({ id: "allUsers", type: "allUsers", email: "", domain: "" });
    expect(expiryOf('request.time < timestamp("2030-01-01T00:00:00Z")')?.toISOString()).toBe(
      "2030-01-01T00:00:00.000Z",
    );
  });

  it("a rules file's problems are at their line and column; lint: false turns a built-in off", () => {
    const file = join(dir, "rules.yaml");
    writeFileSync(
      file,
      'rules:\n  - id: r\n    description: d\n    enforcement: mandatory\n    condition: "role + 1 == 2"\n',
    );
    const diags: Diagnostic[] = [];
    const stack = { source: new SourceDocument(join(dir, "stack.yaml"), "name: s\n"), lint: { "basic-role": false } };
    loadRuleSet(stack, [file], diags);
    expect(diags).toEqual([
      expect.objectContaining({ file, line: 5, column: 22, summary: expect.stringContaining("no matching overload") }),
    ]);
    writeFileSync(file, "rules: []\n");
    const ok = loadRuleSet(stack, [file], []);
    expect(ok?.rules.map((r) => r.id)).toEqual([
      "public-principal",
      "deleted-principal",
      "policy-size",
      "lookalike-principal",
    ]);
  });
});
