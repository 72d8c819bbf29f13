// `converge state push FILE` of a file that is not a valid state: FILE is the input, not the
// state. The refusal once advised restoring FILE.backup ("the previous version of the state is
// kept in FILE.backup … copy it over FILE", or "No backup (FILE.backup) exists"), as if FILE were
// the damaged current state. It must say that FILE is what was pushed, that nothing was written
// and the current state is untouched, and never send anyone to FILE.backup. Needs `npm run build`.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NIGHTLY_VIEWERS, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, stackTraceLines, useEmulatorWorkspace } from "./helpers.js";

const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [
      { name: "projects/my-project/locations/us-central1/restorePlans/nightly", policy: { bindings: [] } },
    ],
  },
  "converge-state-push-input-",
);

describe("state push of a bad file", { timeout: 60_000 }, () => {
  it.each([
    ["unparsable", "{ not json", /is not valid JSON/],
    ["empty", "", /is empty/],
    ["invalid", '{"version": 1, "stack": 5}\n', /is not a valid converge state/],
  ])(
    "%s: names FILE as the pushed input, says the current state is untouched, no .backup advice",
    async (kind, text, what) => {
      const stack = join(ws.dir, "stack.yaml");
      await writeFile(stack, `${stackHead("push")}${NIGHTLY_VIEWERS}`);
      const statePath = join(ws.dir, "state.json");
      expectExit(
        await runCli(["apply", "--auto-approve", "-f", stack, "--state", statePath], { cwd: ws.dir, emulator: ws.emu }),
        0,
      );
      const before = await readFile(statePath);
      const file = join(ws.dir, `${kind}.json`);
      await writeFile(file, text);
      // A FILE.backup beside it must not be offered either (it is not the state's backup).
      if (kind === "invalid") await writeFile(`${file}.backup`, "{}");

      const r = await runCli(["state", "push", file, "-f", stack, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
      });
      expectExit(r, 1);
      expect(stackTraceLines(r.stderr)).toEqual([]);
      expect(r.stderr).toMatch(what);
      expect(r.stderr).toContain(file);
      expect(r.stderr).not.toContain(".backup");
      expect(r.stderr).toMatch(/the file to push/);
      expect(r.stderr).toMatch(/Nothing was written: the current state .* is unchanged/);
      expect((await readFile(statePath)).equals(before)).toBe(true);
    },
  );
});
