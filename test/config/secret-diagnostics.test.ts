// Secrets met while loading (secret inputs, fn::secret, and forEach collections computed from
// them) are never quoted back: load diagnostics and the stack's addresses as shown carry
// "(sensitive value)" in their place, as plan does, at the same position and with the same meaning.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import type { GivenInputs } from "../../src/config/inputs.js";
import { scrubText, secretList } from "../../src/config/redact.js";
import { MEMBER, STACK_HEAD } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";
const STACK = `${STACK_HEAD}config:
  tok: { type: string, secret: true }
  who: { type: list, secret: true, default: ["user:hidden1@example.com"] }
variables:
  fe: ["user:\${tok}@example.com"]
  sv:
    fn::secret: ["user:fnsecret1@example.com"]
resources:
  each:
    type: ${MEMBER}
    options: { forEach: "\${who}" }
    properties: { name: churn, role: roles/aiplatform.user, member: "\${each.value}" }
  tk:
    type: ${MEMBER}
    options: { forEach: "\${fe}" }
    properties: { name: churn, role: roles/aiplatform.admin, member: "\${each.value}" }
  fs:
    type: ${MEMBER}
    options: { forEach: "\${sv}" }
    properties: { name: churn, role: roles/aiplatform.viewer, member: "\${each.value}" }
`;

const vars = (given: Record<string, string>): GivenInputs => ({
  vars: Object.entries(given).map(([name, value]) => ({
    name,
    value,
    text: true,
    source: { kind: "flag", flag: "--var", name },
  })),
  files: [],
  env: [],
});
const load = (given: Record<string, string>) =>
  parseStack(FILE, STACK, { inputs: vars({ tok: "t0ks3cret", ...given }) });
const everything = (r: ReturnType<typeof load>) => JSON.stringify(r.diagnostics);

describe("secrets met while loading", () => {
  it("are not quoted by a duplicate grant", () => {
    const r = load({ who: '["user:dup@example.com","user:DUP@example.com"]' });
    expect(r.diagnostics).toHaveLength(1);
    expect(everything(r)).not.toMatch(/dup@example\.com/i);
    expect(r.diagnostics[0]).toMatchObject({ severity: "error", file: FILE, line: 13, column: 3 });
    expect(r.diagnostics[0]!.summary).toContain(
      'resources each["(sensitive value)"] and each["(sensitive value)"] both ' +
        "grant (sensitive value) role roles/aiplatform.user",
    );
  });

  it("are not quoted by a member check", () => {
    const r = load({ who: '["bad:secretmember"]' });
    expect(r.diagnostics).toHaveLength(1);
    expect(everything(r)).not.toContain("secretmember");
    expect(r.diagnostics[0]).toMatchObject({ severity: "error", file: FILE, line: 16, column: 69 });
    expect(r.diagnostics[0]!.summary).toContain('member "(sensitive value)" has unknown type');
  });

  it("are not quoted by a forEach check", () => {
    const r = load({ who: '["user:x@example.com","user:x@example.com"]' });
    expect(r.diagnostics).toHaveLength(1);
    expect(everything(r)).not.toContain("x@example.com");
    expect(r.diagnostics[0]).toMatchObject({
      severity: "error",
      file: FILE,
      line: 15,
      column: 25,
      summary: 'resources.each.options.forEach: "(sensitive value)" is in the list twice',
    });
  });

  it("are not quoted when a member is interpolated from a secret scalar, not even the part of it that is wrong", () => {
    const r = load({ tok: "s3cr et" });
    expect(r.diagnostics).toHaveLength(1);
    expect(everything(r)).not.toContain("s3cr");
    expect(r.diagnostics[0]).toMatchObject({
      severity: "error",
      file: FILE,
      line: 20,
      column: 70,
      address: 'tk["(sensitive value)"]',
    });
    expect(r.diagnostics[0]!.summary).toBe(
      'tk["(sensitive value)"]: member "(sensitive value)": what follows "user:" is not an email ' +
        "address: it contains white space (U+0020); expected user:{name}@{domain}",
    );
    // A whole secret member: the part after its type is not quoted either.
    const whole = load({ who: '["user:bad secret@example.com"]' });
    expect(JSON.stringify(whole.diagnostics)).not.toContain("bad secret");
    expect(whole.diagnostics[0]!.summary).toBe(
      'each["(sensitive value)"]: member "(sensitive value)": what follows "user:" is not an email ' +
        "address: it contains white space (U+0020); expected user:{name}@{domain}",
    );
  });

  it("are not quoted in an address or a message that escapes them (a secret with a quote or a backslash)", () => {
    const r = load({ who: JSON.stringify(['user:q"uo\\te x@example.com']) });
    expect(r.diagnostics.length).toBeGreaterThan(0);
    expect(everything(r)).not.toContain("uo");
    expect(r.diagnostics[0]!.address).toBe('each["(sensitive value)"]');
  });

  it("are the stack's secrets: every string of a secret input, and forEach keys computed from a secret", () => {
    const r = load({});
    expect(r.diagnostics).toEqual([]);
    const stack = r.stack!;
    // fn::secret makes the instances of its elements, as any list does.
    expect([...stack.resources.keys()]).toEqual([
      'each["user:hidden1@example.com"]',
      'tk["user:t0ks3cret@example.com"]',
      'fs["user:fnsecret1@example.com"]',
    ]);
    expect(stack.secrets).toEqual(
      expect.arrayContaining([
        "t0ks3cret",
        "user:hidden1@example.com",
        "user:t0ks3cret@example.com",
        "user:fnsecret1@example.com",
      ]),
    );
    // Each address is shown as plan shows it.
    expect([...stack.resources.keys()].map((a) => scrubText(a, secretList(stack.secrets)))).toEqual([
      'each["(sensitive value)"]',
      'tk["(sensitive value)"]',
      'fs["(sensitive value)"]',
    ]);
  });
});
