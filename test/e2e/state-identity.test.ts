// Issue 11, item 2: a state file belongs to one stack. Through the built CLI against the real
// emulator: every command refuses a state that records another stack's name (exit 1, both names
// in the message, state bytes unchanged, no cloud call); the default state path is the stack
// file's directory, not the working directory (the embedded emulator's world follows it); a
// serial that is not a safe integer is refused. Needs `npm run build`.
import { cpSync, existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { serializeState } from "../../src/state/index.js";
import { DANA_INVOKER, ep, NIGHTLY_VIEWERS, rp, stackHead } from "./apply-helpers.js";
import {
  expectExit,
  REPO,
  resetStats,
  runCli,
  stackTraceLines,
  stats,
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-state-identity-");

/** Writes {dir}/{sub}/stack.yaml for a stack named `name` and returns its path. */
async function writeStack(sub: string, name: string): Promise<string> {
  await mkdir(join(ws.dir, sub), { recursive: true });
  const file = join(ws.dir, sub, "stack.yaml");
  await writeFile(file, `${stackHead(name)}${NIGHTLY_VIEWERS}${DANA_INVOKER}outputs:\n  viewersId: \${viewers.id}\n`);
  return file;
}

/** Every command that opens a stack's state, as arguments (stack and state options appended). */
const STATE_COMMANDS: string[][] = [
  ["plan"],
  ["apply", "--auto-approve"],
  ["destroy", "--auto-approve"],
  ["refresh"],
  ["import", "viewers", `${rp("nightly")} roles/gkebackup.viewer`],
  ["state", "list"],
  ["state", "show", "viewers"],
  ["state", "rm", "viewers"],
  ["state", "mv", "viewers", "watchers"],
  ["output"],
];

// A generous timeout: every step is a fresh CLI process (about a second each on a busy machine).
describe("state identity", { timeout: 120_000 }, () => {
  it(
    "every command refuses another stack's state given with --state: exit " +
      "1, both names, nothing written, no cloud call",
    async () => {
      const payments = await writeStack("payments", "payments");
      const analytics = await writeStack("analytics", "analytics");
      const paymentsState = join(ws.dir, "payments", "state", "payments.json");
      expectExit(
        await runCli(["apply", "--auto-approve", "-f", payments, "--state", paymentsState], {
          cwd: ws.dir,
          emulator: ws.emu,
        }),
        0,
      );
      const bytes = await readFile(paymentsState);
      const files = await readdir(join(ws.dir, "payments", "state"));

      await resetStats(ws.emu);
      for (const args of STATE_COMMANDS) {
        const r = await runCli([...args, "-f", analytics, "--state", paymentsState], { cwd: ws.dir, emulator: ws.emu });
        const what = args.join(" ");
        expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(1);
        expect(r.stderr, what).toContain(
          `state file ${paymentsState} belongs to stack "payments", not to stack "analytics"`,
        );
        expect(stackTraceLines(r.stderr), what).toEqual([]);
        expect((await readFile(paymentsState)).equals(bytes), what).toBe(true);
      }
      expect(totalRequests(await stats(ws.emu))).toBe(0);
      expect(await readdir(join(ws.dir, "payments", "state"))).toEqual(files); // no lock, temp or backup left
      expect(existsSync(join(ws.dir, "analytics", "state"))).toBe(false);
    },
  );

  it(
    "the default state is state/{name}.json in the stack file's directory, whatever " +
      "the working directory; the embedded world follows it",
    async () => {
      const sub = join(ws.dir, "sub", "dir");
      cpSync(join(REPO, "examples", "quickstart"), sub, { recursive: true });
      const rel = join("sub", "dir", "stack.yaml");
      // No CLOUDNATIVE_EMULATOR_HOST: the quickstart's embedded emulator keeps its world beside the state.
      expectExit(await runCli(["apply", "--auto-approve", "-f", rel], { cwd: ws.dir }), 0);
      expect(existsSync(join(sub, "state", "quickstart.json"))).toBe(true);
      expect(existsSync(join(sub, "state", "quickstart.emulator.world"))).toBe(true);
      expect(existsSync(join(ws.dir, "state"))).toBe(false);

      // From another directory, every command finds the same state (and the same embedded world).
      const elsewhere = join(ws.dir, "sub");
      const stack = join("dir", "stack.yaml");
      const [plan, list, output] = await Promise.all([
        runCli(["plan", "--detailed-exitcode", "-f", stack], { cwd: elsewhere }),
        runCli(["state", "list", "-f", stack], { cwd: elsewhere }),
        runCli(["output", "--json", "-f", stack], { cwd: elsewhere }),
      ]);
      expectExit(plan, 0);
      expect(plan.stdout).toContain("No changes.");
      expectExit(list, 0);
      expect(list.stdout).toContain("restoreViewers\n");
      expectExit(output, 0);
      expect(Object.keys(JSON.parse(output.stdout) as object).length).toBeGreaterThan(0);
      expect(existsSync(join(elsewhere, "state"))).toBe(false);

      // With --state and no stack file at all, the state commands open the state for no stack in particular.
      const bare = await runCli(["state", "list", "--state", join(sub, "state", "quickstart.json")], {
        cwd: join(sub, "state"),
      });
      expectExit(bare, 0);
      expect(bare.stdout).toBe(list.stdout);
    },
  );

  it(
    "refuses a state with a duplicated resource address (every command, state push too): exit " +
      "1, the address and both places, nothing written, no cloud call",
    async () => {
      const stack = await writeStack("dups", "dups");
      const dir = join(ws.dir, "dups");
      const statePath = join(dir, "state", "dups.json");
      expectExit(
        await runCli(["apply", "--auto-approve", "-f", stack, "--state", statePath], { cwd: ws.dir, emulator: ws.emu }),
        0,
      );
      const applied = JSON.parse(await readFile(statePath, "utf8")) as State;
      const i = applied.resources.findIndex((r) => r.address === "invoker");
      expect(i).toBeGreaterThanOrEqual(0);
      // A second invoker entry for someone else's grant: revoking it is not converge's to do.
      const theirs = JSON.parse(
        JSON.stringify(applied.resources[i]).replaceAll("user:dana@example.com", "user:mallory@example.com"),
      ) as State["resources"][number];
      const dup: State = { ...applied, resources: [...applied.resources, theirs] };
      const dupText = serializeState(dup);
      const where = new RegExp(
        `resource address "invoker" .*resources\\[${i}\\] \\(line \\d+, column ` +
          `5\\).*resources\\[${dup.resources.length - 1}\\] \\(line \\d+, column 5\\)`,
      );
      await writeFile(join(dir, "dup.json"), dupText);
      const good = await readFile(statePath);
      const files = await readdir(join(dir, "state"));

      await resetStats(ws.emu);
      const push = await runCli(["state", "push", join(dir, "dup.json"), "-f", stack, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
      });
      expect(push.code, `${push.stdout}\n${push.stderr}`).toBe(1);
      expect(push.stderr).toMatch(where);
      expect((await readFile(statePath)).equals(good)).toBe(true);

      await writeFile(statePath, dupText, { mode: 0o600 });
      for (const args of [...STATE_COMMANDS, ["state", "push", join(dir, "dup.json")]]) {
        const r = await runCli([...args, "-f", stack, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
        const what = args.join(" ");
        expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(1);
        expect(r.stderr, what).toContain(`state file ${statePath} is not a valid converge state`);
        expect(r.stderr, what).toMatch(where);
        expect(stackTraceLines(r.stderr), what).toEqual([]);
        expect(await readFile(statePath, "utf8"), what).toBe(dupText);
      }
      expect(totalRequests(await stats(ws.emu))).toBe(0);
      expect(await readdir(join(dir, "state"))).toEqual(files); // no lock, temp or backup left
    },
  );

  it("refuses a state whose serial is not a safe whole number, writing nothing and calling nothing", async () => {
    const stack = await writeStack("serials", "serials");
    const statePath = join(ws.dir, "serials", "state", "serials.json");
    await mkdir(join(ws.dir, "serials", "state"), { recursive: true });
    for (const serial of ["1e300", "9007199254740993", "-1", "1.5"]) {
      const text =
        `{\n  "version": 1,\n  "lineage": "0b6f1c9e-1f0e-4a39-9b8c-3f3f1c2d9a10",\n  "serial": ${serial}` +
        `,\n  "stack": "serials",\n  "resources": [],\n  "outputs": {}\n}\n`;
      await writeFile(statePath, text, { mode: 0o600 });
      await resetStats(ws.emu);
      for (const args of [["plan"], ["apply", "--auto-approve"]]) {
        const r = await runCli([...args, "-f", stack, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
        const what = `${args[0]} with serial ${serial}`;
        expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(1);
        expect(r.stderr, what).toMatch(/serial/);
        expect(stackTraceLines(r.stderr), what).toEqual([]);
        expect(await readFile(statePath, "utf8"), what).toBe(text);
      }
      expect(totalRequests(await stats(ws.emu)), serial).toBe(0);
    }
  });
});
