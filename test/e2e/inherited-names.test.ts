// Issue 12, class 3, through the real CLI: a stack whose variable, resource and outputs are named
// like Object.prototype's members applies, its state keeps every output, and `converge output NAME`
// finds exactly the outputs that exist (an inherited name that is not an output is "not found").
import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { MEMBER_T, ep } from "./apply-helpers.js";
import { expectExit, runCli, useStackWorkspace } from "./helpers.js";

const INHERITED = Object.getOwnPropertyNames(Object.prototype).filter((n) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(n));
/** Inherited names that are not outputs of the stack. */
const ABSENT = ["valueOf", "hasOwnProperty"];
const PRESENT = INHERITED.filter((n) => !ABSENT.includes(n));

/** The value each output should have after apply. */
const EXPECTED: Record<string, string> = Object.fromEntries(
  PRESENT.map((n) => [n, n === "__proto__" ? "tv" : n === "constructor" ? "user:ana@example.com" : `out-${n}`]),
);
const outputLine = (n: string) =>
  `  ${n}: "` +
  `${n === "__proto__" ? "${toString.valueOf}" : n === "constructor" ? "${constructor.member}" : `out-${n}`}"\n`;

const STACK = `name: inherited
provider:
  project: my-project
  location: us-central1
variables:
  toString:
    valueOf: tv
resources:
  constructor:
    type: ${MEMBER_T}
    properties:
      name: churn
      role: roles/aiplatform.user
      member: user:ana@example.com
outputs:
${PRESENT.map(outputLine).join("")}`;

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: ep("churn") }],
};

const ws = useStackWorkspace(SEED, "converge-inherited-", STACK, "inherited.json");
const cli = (args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu });

describe("names every object inherits, through apply and converge output", { timeout: 90_000 }, () => {
  beforeAll(async () => {
    expectExit(await cli(["apply", "--auto-approve"]), 0);
  });

  it("the state holds every output under its own name, __proto__ included", async () => {
    const state = JSON.parse(await readFile(ws.statePath, "utf8")) as State;
    expect(Object.keys(state.outputs).sort()).toEqual([...PRESENT].sort());
    for (const n of PRESENT) expect(Object.hasOwn(state.outputs, n) && state.outputs[n]).toBe(EXPECTED[n]);
    expect(state.resources.map((r) => r.address)).toEqual(["constructor"]);
  });

  it("converge output NAME prints each one", async () => {
    for (const n of PRESENT) {
      const r = await cli(["output", n, "--raw"]);
      expectExit(r, 0);
      expect(r.stdout, n).toBe(`${EXPECTED[n]}\n`);
    }
  });

  it("converge output --json prints them all and nothing else", async () => {
    const r = await cli(["output", "--json"]);
    expectExit(r, 0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(EXPECTED)));
  });

  it("an inherited name that is not an output is not found", async () => {
    for (const n of ABSENT) {
      const r = await cli(["output", n]);
      expectExit(r, 1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`output "${n}" not found`);
      expect(r.stderr).not.toContain("internal error");
    }
  });

  it("a second plan finds no changes", async () => {
    const r = await cli(["plan", "--detailed-exitcode"]);
    expectExit(r, 0);
  });
});
