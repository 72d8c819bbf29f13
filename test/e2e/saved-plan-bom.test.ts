// A saved plan that an editor saved again with a UTF-8 byte order mark before its JSON was refused,
// and the refusal printed the BOM itself (an invisible character, from the file, on the terminal).
// The seal covers the plan's canonical content (src/plan/saved-plan.ts), not the file's bytes: a
// BOM changes nothing sealed, so such a plan is accepted (its digest and signature still checked).
// A file that is not JSON is refused without any raw invisible character in the message.
// Needs `npm run build`.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { bindingYaml, membersOf, rp, stackHead } from "./apply-helpers.js";
import { expectExit, livePolicy, runCli, stackTraceLines, useEmulatorWorkspace } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-saved-plan-bom-");
const BOM = "\ufeff";
/** Characters that show nothing, or act, on a terminal: none may reach it from the file. */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
let stackFile: string;
let statePath: string;
let planFile: string;

beforeAll(async () => {
  stackFile = join(ws.dir, "stack.yaml");
  statePath = join(ws.dir, "state.json");
  planFile = join(ws.dir, "bom.plan.json");
  await writeFile(
    stackFile,
    stackHead("bom") + bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]),
  );
  expectExit(
    await runCli(["plan", "--out", planFile, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu }),
    0,
  );
});

describe("a saved plan with a byte order mark", { timeout: 60_000 }, () => {
  it("show and apply accept it", async () => {
    await writeFile(planFile, BOM + (await readFile(planFile, "utf8")));
    const shown = await runCli(["show", planFile], { cwd: ws.dir });
    expect(shown.stderr).toBe("");
    expectExit(shown, 0);
    const r = await runCli(["apply", planFile, "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expectExit(r, 0);
    expect(membersOf(await livePolicy(ws.emu, rp("nightly")), "roles/gkebackup.viewer")).toEqual([
      "user:alice@example.com",
    ]);
  });

  it("the seal is still checked: a changed plan with a BOM is refused", async () => {
    const text = (await readFile(planFile, "utf8")).replace("user:alice@example.com", "user:mallory@example.com");
    await writeFile(planFile, text.startsWith(BOM) ? text : BOM + text);
    const r = await runCli(["show", planFile], { cwd: ws.dir });
    expectExit(r, 1);
    expect(r.stderr).toMatch(/does not match its digest/);
  });

  it.each([
    ["two BOMs", `${BOM}${BOM}{}`],
    ["a zero-width space", "\u200b{}"],
    ["a bidi override", '{"a": 1\u202e}'],
    ["an ESC", "\u001b[2J{}"],
  ])("a file that is not JSON (%s) is refused, the character described, never printed", async (_what, text) => {
    const bad = join(ws.dir, "bad.plan.json");
    await writeFile(bad, text);
    const r = await runCli(["show", bad], { cwd: ws.dir });
    expectExit(r, 1);
    expect(r.stderr).toMatch(/is not valid JSON/);
    expect(r.stderr).toMatch(/U\+(FEFF|200B|202E|001B)/);
    expect(r.stderr.replace(/\n/g, "")).not.toMatch(INVISIBLE);
  });
});
