// Issue 18, item 1: configuration inputs (`config:`): types, defaults, the order of precedence
// (--var, --var-file, CONVERGE_VAR_, default; later --var/--var-file wins), and every error
// positioned at its source (the flag, file:line:column, the environment variable).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import type { GivenInputs } from "../../src/config/inputs.js";
import { readInputs } from "../../src/config/var-files.js";

const FILE = "/virtual/stack.yaml";
const STACK = `name: inputs
provider:
  project: my-project
  location: us-central1
config:
  env:
    type: string
    description: the environment
  members:
    type: list
    default: ["user:a@example.com"]
  replicas:
    type: number
    default: 2
  strict:
    type: boolean
    default: false
  labels:
    type: map
    default: {}
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: plan-\${env}
      role: roles/gkebackup.viewer
      members: \${members}
`;

const dir = mkdtempSync(join(tmpdir(), "converge-inputs-"));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

function load(args: { vars?: string[]; varFiles?: string[]; env?: NodeJS.ProcessEnv }, stack = STACK) {
  const read = readInputs(args);
  const r = parseStack(FILE, stack, { inputs: read.given });
  return { ...r, diagnostics: [...read.diagnostics, ...r.diagnostics] };
}
const valueOf = (r: ReturnType<typeof load>, name: string) => r.stack?.config.get(name)?.value;

describe("config inputs", () => {
  it("take --var over --var-file over CONVERGE_VAR_ over the default", () => {
    const f = file("a.yaml", "env: from-file\nreplicas: 5\n");
    const env = { CONVERGE_VAR_env: "from-env", CONVERGE_VAR_replicas: "7", CONVERGE_VAR_strict: "true" };
    const r = load({ vars: ["env=from-flag"], varFiles: [f], env });
    expect(r.diagnostics).toEqual([]);
    expect(valueOf(r, "env")).toBe("from-flag");
    expect(valueOf(r, "replicas")).toBe(5);
    expect(valueOf(r, "strict")).toBe(true);
    expect(valueOf(r, "members")).toEqual(["user:a@example.com"]);
    expect(r.stack?.config.get("env")?.from).toBe("--var env=…");
  });

  it("let a later --var and a later --var-file win; parse lists and maps as JSON", () => {
    const a = file("first.json", '{"env": "one", "labels": {"team": "a"}}');
    const b = file("second.yaml", "env: two\n");
    const r = load({ vars: ['members=["user:x@example.com"]', 'members=["user:y@example.com"]'], varFiles: [a, b] });
    expect(r.diagnostics).toEqual([]);
    expect(valueOf(r, "env")).toBe("two");
    expect(valueOf(r, "labels")).toEqual({ team: "a" });
    expect(valueOf(r, "members")).toEqual(["user:y@example.com"]);
  });

  it("report a missing required input at its declaration", () => {
    const r = load({});
    expect(r.stack).toBeUndefined();
    expect(r.diagnostics).toMatchObject([
      { code: "input/missing", file: FILE, line: 6, column: 3, summary: 'input "env" has no value' },
    ]);
  });

  it("report a value of the wrong type at its source: flag, file:line:column, environment variable", () => {
    const f = file("bad.yaml", "# comment\nenv: ok\nreplicas: many\n");
    const r = load({
      vars: ["strict=yes"],
      varFiles: [f],
      env: { CONVERGE_VAR_members: "[1", CONVERGE_VAR_other: "ignored" },
    });
    expect(r.diagnostics.map((d) => [d.code, d.summary, d.file, d.line, d.column])).toEqual([
      [
        "input/type",
        'input "members": "[1" is not JSON; a list is given as JSON, e.g. ["a","b"] (from CONVERGE_VAR_members)',
        undefined,
        undefined,
        undefined,
      ],
      ["input/type", 'input "replicas": expected a number, got a string', f, 3, 11],
      [
        "input/type",
        'input "strict": "yes" is not a boolean (true or false) (from --var strict=…)',
        undefined,
        undefined,
        undefined,
      ],
    ]);
  });

  it("reject an unknown --var name, with a suggestion; warn of an unknown name in a --var-file", () => {
    const f = file("extra.yaml", "env: dev\nzone: x\n");
    const r = load({ vars: ["member=[]"], varFiles: [f] });
    expect(r.diagnostics.map((d) => [d.severity, d.summary, d.line])).toEqual([
      ["warning", 'unknown input "zone"', 2],
      ["error", 'unknown input "member" (did you mean "members"?) (from --var member=…)', undefined],
    ]);
  });

  it("report a --var that is not name=value and a var file that cannot be read or parsed", () => {
    const broken = file("broken.yaml", "env: [unclosed\n");
    const read = readInputs({ vars: ["novalue"], varFiles: [join(dir, "absent.yaml"), broken] });
    expect(read.diagnostics.map((d) => d.code)).toEqual(["input/syntax", "input/file", "input/file"]);
    expect(read.diagnostics[2]).toMatchObject({ file: broken, line: 2 });
  });

  it(
    "refuse a --var or CONVERGE_VAR_ list or map nested deeper than a " +
      "--var-file may be, naming where it came from",
    () => {
      const list = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
      const map = (depth: number) => '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
      const deep = load({ vars: ["env=dev", `members=${list(65)}`], env: { CONVERGE_VAR_labels: map(65) } });
      expect(deep.diagnostics.map((d) => [d.code, d.summary, d.detail])).toEqual([
        [
          "input/depth",
          'input "labels": nested more than 64 levels deep (from CONVERGE_VAR_labels)',
          expect.stringContaining("at most 64 levels"),
        ],
        [
          "input/depth",
          'input "members": nested more than 64 levels deep (from --var members=…)',
          expect.stringContaining("at most 64 levels"),
        ],
      ]);
      // The same limit as a --var-file's: 64 levels are fine there and here.
      const f = file("deep.yaml", `members: ${list(65)}\n`);
      expect(readInputs({ varFiles: [f] }).diagnostics.map((d) => d.summary)).toEqual([
        `--var-file ${f}: nested more than 64 levels deep`,
      ]);
      // (A stack that does not grant them: a list of lists is no list of members, refused when it loads.)
      const unused = STACK.replace("members: ${members}", "members: [user:a@example.com]");
      const ok = load({ vars: ["env=dev", `members=${list(64)}`], env: { CONVERGE_VAR_labels: map(64) } }, unused);
      expect(ok.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      // Brackets inside strings are text, not nesting.
      const quoted = load({ vars: ["env=dev", `members=["${"[{".repeat(100)}\\"${"]}".repeat(100)}"]`] }, unused);
      expect(quoted.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      expect((valueOf(quoted, "members") as string[])[0]).toHaveLength(401);
    },
  );

  it("refuse values nested thousands of levels deep without exhausting the stack, secrets too", () => {
    const stack = STACK.replace("type: list\n    default:", "type: list\n    secret: true\n    default:");
    for (const depth of [5_000, 200_000]) {
      const text = "[".repeat(depth) + "]".repeat(depth);
      const r = load({ vars: ["env=dev"], env: { CONVERGE_VAR_members: text } }, stack);
      expect(r.diagnostics.map((d) => d.summary)).toEqual([
        'input "members": nested more than 64 levels deep (from CONVERGE_VAR_members)',
      ]);
      const v = load({ vars: ["env=dev", `labels=${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`] });
      expect(v.diagnostics.map((d) => d.summary)).toEqual([
        'input "labels": nested more than 64 levels deep (from --var labels=…)',
      ]);
    }
  });

  it("check a default against the type, and never quote a secret's wrong value", () => {
    const stack = STACK.replace("default: 2", "default: two").replace(
      "type: string\n    description: the environment",
      "type: number\n    secret: true",
    );
    const r = load({ vars: ["env=hunter2"] }, stack);
    expect(r.diagnostics.map((d) => d.summary)).toEqual([
      "config.replicas: the default expected a number, got a string",
      'input "env": the value is not a number (from --var env=…)',
    ]);
    expect(JSON.stringify(r.diagnostics)).not.toContain("hunter2");
  });

  it(
    "resolve ${input} in properties at plan time like a variable; an " + "input and a variable may not share a name",
    () => {
      const given: GivenInputs = {
        vars: [],
        files: [],
        env: [{ name: "env", value: "dev", text: true, source: { kind: "env", variable: "CONVERGE_VAR_env" } }],
      };
      expect(parseStack(FILE, STACK, { inputs: given }).stack?.config.get("env")?.value).toBe("dev");
      const clash = parseStack(FILE, STACK + "variables:\n  env: x\n", { inputs: given });
      expect(clash.diagnostics.map((d) => d.summary)).toContain('"env" is declared both as an input and as a variable');
    },
  );
});
