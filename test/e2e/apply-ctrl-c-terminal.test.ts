// Ctrl-C typed in a terminal during an apply that was approved at the prompt: the interrupt is
// acknowledged at once (while the writes in flight are still waiting for their answers), not when
// they end, and the apply stops as on SIGINT. Driven through a real pseudo-terminal (util-linux
// `script`), where Ctrl-C is a keystroke the terminal turns into SIGINT.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { stats, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, clearFaults, count, M, PROMPT, rp, runInPty, setFaults, stackHead } from "./apply-helpers.js";

const HAS_SCRIPT = existsSync("/usr/bin/script");
const ids = Array.from({ length: 6 }, (_, i) => `p${i}`);
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ids.map((i) => ({ name: rp(i), policy: { bindings: [] } })),
};
const ws = useEmulatorWorkspace(SEED, "converge-ctrl-c-terminal-");
const answered = (s: Awaited<ReturnType<typeof stats>>) =>
  Object.values(s.responses?.[M.rpSet] ?? {}).reduce((a, b) => a + b, 0);

describe.skipIf(!HAS_SCRIPT)("Ctrl-C typed during an approved apply", { timeout: 90_000 }, () => {
  it("is acknowledged while the writes in flight still wait, and the apply stops (exit 130)", async () => {
    const file = join(ws.dir, "stack.yaml");
    await writeFile(
      file,
      stackHead("ctrlc") +
        ids.map((i) => bindingYaml(i, i, "roles/gkebackup.viewer", [`user:${i}@example.com`])).join(""),
    );
    // Every write waits far longer than the acknowledgement may take.
    await setFaults(ws.emu, { latencyMs: 8_000, methods: [M.rpSet] });
    const pty = runInPty(["apply", "-f", file, "--parallelism", "2"], {
      cwd: ws.dir,
      emulator: ws.emu,
      timeoutMs: 80_000,
    });
    try {
      const prompted = await pty.waitFor(PROMPT);
      await pty.answer("yes");
      // The progress is drawn (and redrawn in place) before the key is typed.
      await pty.waitFor("elapsed", prompted);
      // Both writes in flight: sent, not answered.
      for (;;) {
        const s = await stats(ws.emu);
        if (count(s, M.rpSet) >= 2) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      pty.type("\x03");
      const acked = await pty.waitFor("Interrupt received", prompted, 6_000);
      // The progress view redraws itself in place (every 250 ms): the acknowledgement stays on
      // screen through the redraws, not erased by the next one.
      await pty.waitFor("elapsed", acked, 6_000);
      expect(answered(await stats(ws.emu)), pty.text()).toBe(0);
      expect(await pty.screen()).toContain("Interrupt received. Finishing in-flight calls");
      expect(await pty.exit, pty.text()).toBe(130);
    } finally {
      pty.kill();
      await clearFaults(ws.emu);
    }
  });
});
