// `workspace delete --force` keeps the deleted workspace's last state as the state file's
// `.backup` (README); a later workspace of the same name must never overwrite it with a state of
// its own lineage: `workspace new` moves it aside to {state file}.deleted-{lineage}-{serial}.backup
// (mode 0600) and says so. Every other write keeps such a backup too: a state file started next to
// another lineage's backup (--state at a new file, `state push` of a state to an empty path) moves
// it aside on the write that would replace it. Through the built CLI against the emulator. Needs
// `npm run build`.
import { existsSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { DANA_INVOKER, ep, NIGHTLY_VIEWERS, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-ws-backup-");
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("a deleted workspace's last state", { timeout: 120_000 }, () => {
  it(
    "is the state file's .backup after workspace delete --force, and " +
      "no later workspace of that name overwrites it",
    async () => {
      const cli = (args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu });
      await writeFile(join(ws.dir, "stack.yaml"), `${stackHead("app")}${NIGHTLY_VIEWERS}`);
      const file = join(ws.dir, "state", "app.w1.json");
      expectExit(await cli(["workspace", "new", "w1"]), 0);
      expectExit(await cli(["apply", "--auto-approve"]), 0);
      const abandoned = await readFile(file, "utf8");
      const old = JSON.parse(abandoned) as State;

      expectExit(await cli(["workspace", "select", "default"]), 0);
      expectExit(await cli(["workspace", "delete", "w1", "--force"]), 0);
      expect(existsSync(file)).toBe(false);
      expect(await readFile(`${file}.backup`, "utf8")).toBe(abandoned); // as the README says

      const again = await cli(["workspace", "new", "w1"]);
      expectExit(again, 0);
      const kept = `${file}.deleted-${old.lineage}-${old.serial}.backup`;
      expect(again.stdout).toContain(kept);
      expect(await readFile(kept, "utf8")).toBe(abandoned);
      expect(modeOf(kept)).toBe("600");

      // Two applies of the new workspace (every write after the first replaces the .backup).
      expectExit(await cli(["apply", "--auto-approve"]), 0);
      await writeFile(join(ws.dir, "stack.yaml"), `${stackHead("app")}${NIGHTLY_VIEWERS}${DANA_INVOKER}`);
      expectExit(await cli(["apply", "--auto-approve"]), 0);
      const current = JSON.parse(await readFile(file, "utf8")) as State;
      expect(current.lineage).not.toBe(old.lineage);
      expect((JSON.parse(await readFile(`${file}.backup`, "utf8")) as State).lineage).toBe(current.lineage);
      expect(await readFile(kept, "utf8")).toBe(abandoned);
    },
  );
});

describe("a .backup of another lineage beside a state file that starts anew", { timeout: 120_000 }, () => {
  it(
    "is kept aside, not replaced, when --state names a new file " + "there, and when state push starts one there",
    async () => {
      const dir = join(ws.dir, "fresh");
      await mkdir(dir);
      await writeFile(join(dir, "stack.yaml"), `${stackHead("app")}${NIGHTLY_VIEWERS}`);
      const cli = (args: string[]) => runCli(args, { cwd: dir, emulator: ws.emu });
      const old = join(dir, "old.json");
      expectExit(await cli(["apply", "--auto-approve", "--state", old]), 0);
      const abandoned = await readFile(old, "utf8");
      const prior = JSON.parse(abandoned) as State;

      // Another state of the stack (another lineage), to push.
      const other = join(dir, "other.json");
      await writeFile(other, JSON.stringify({ ...prior, lineage: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" }, null, 2));
      // The old state's last version left as the .backup of a file converge now starts anew.
      for (const [name, start] of [
        ["new.json", ["apply", "--auto-approve"]],
        ["pushed.json", ["state", "push", other]],
      ] as const) {
        const file = join(dir, name);
        await writeFile(`${file}.backup`, abandoned);
        expectExit(await cli([...start, "--state", file]), 0);
        expect(await readFile(`${file}.backup`, "utf8")).toBe(abandoned); // the first write has nothing to back up
        await writeFile(join(dir, "stack.yaml"), `${stackHead("app")}${NIGHTLY_VIEWERS}${DANA_INVOKER}`);
        expectExit(await cli(["apply", "--auto-approve", "--state", file]), 0);
        const kept = `${file}.deleted-${prior.lineage}-${prior.serial}.backup`;
        expect(await readFile(kept, "utf8")).toBe(abandoned);
        expect(modeOf(kept)).toBe("600");
        const current = JSON.parse(await readFile(file, "utf8")) as State;
        expect((JSON.parse(await readFile(`${file}.backup`, "utf8")) as State).lineage).toBe(current.lineage);
      }
    },
  );
});
