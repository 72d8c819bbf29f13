// A built-in rule's settings are checked as a rule's are: a key the rule does not take is an error
// at its place (a misspelt `domains` used to leave allowed-domains silently off).
import { describe, expect, it } from "vitest";
import { builtinRules } from "../../src/guardrails/builtins.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";

const at = { file: "guardrails.yaml", line: 3, column: 5 };

describe("built-in rule settings", () => {
  it("refuse a key the rule does not take, suggesting the one it was likely meant to be", () => {
    const diags: Diagnostic[] = [];
    const rules = builtinRules({ "allowed-domains": { value: { domain: ["example.com"] }, ...at } }, {}, diags);
    expect(rules.map((r) => r.id)).not.toContain("allowed-domains");
    expect(diags.map((d) => [d.summary, d.file, d.line, d.column])).toEqual([
      ['built-in rule allowed-domains: unknown setting "domain" (did you mean "domains"?)', "guardrails.yaml", 3, 5],
    ]);
  });

  it("accept enforcement, approvers and the rule's own settings", () => {
    const diags: Diagnostic[] = [];
    const value = { domains: ["example.com"], enforcement: "owner-approval", approvers: ["group:sec@example.com"] };
    const rules = builtinRules({ "allowed-domains": { value, ...at } }, {}, diags);
    expect(diags).toEqual([]);
    expect(rules.find((r) => r.id === "allowed-domains")?.enforcement).toBe("owner-approval");
  });

  it("refuse a rule turned on without the settings it needs (it would check nothing)", () => {
    const diags: Diagnostic[] = [];
    const rules = builtinRules({ "allowed-domains": { value: "mandatory", ...at } }, {}, diags);
    expect(rules.map((r) => r.id)).not.toContain("allowed-domains");
    expect(diags.map((d) => d.summary)).toEqual(["built-in rule allowed-domains: needs domains (a list of strings)"]);
  });
});
