// Every malformed fixture through the CLI: `converge plan` exits 1, prints each error as
// FILE:LINE:COLUMN with its summary on stderr, no stack trace, sends nothing to the cloud and
// writes no state.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { INVALID_DIR, INVALID_FIXTURES } from "../fixtures/invalid/expectations.js";
import { REPO, runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: "projects/my-project/locations/us-central1/restorePlans/nightly" }],
  endpoints: [{ name: "projects/my-project/locations/us-central1/endpoints/churn" }],
  federations: [{ name: "projects/my-project/locations/us-central1/federations/lake", labels: { owner: "data-eng" } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-invalid-");

describe.concurrent("converge plan rejects malformed stacks", () => {
  it.each(INVALID_FIXTURES)("$file ($category)", async (fx) => {
    const file = join(INVALID_DIR, fx.file);
    const rel = relative(REPO, file);
    const stateDir = join(ws.dir, fx.file.replace(/\.yaml$/, ""));
    const statePath = join(stateDir, "state.json");
    const r = await runCli(["plan", "-f", rel, "--state", statePath], { emulator: ws.emu });

    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe("");
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expect(r.stderr).not.toContain("internal error");
    const lines = r.stderr.split("\n");
    for (const want of fx.errors) {
      const where = `${rel}:${want.line}:${want.column}: Error: `;
      const line = lines.find((l) => l.startsWith(where) && want.summary.every((s) => l.includes(s)));
      expect(
        line,
        `stderr has no line starting ${where} containing ${JSON.stringify(want.summary)}:\n${r.stderr}`,
      ).toBeDefined();
      if (want.path) expect(r.stderr).toContain(`  at ${want.path}`);
    }
    if (fx.errors.length > 1) {
      // all reported together, in document order, with a count
      expect(r.stderr).toContain(`${fx.errors.length} errors, 0 warnings.`);
      const positions = lines
        .filter((l) => l.startsWith(`${rel}:`))
        .map((l) =>
          l
            .slice(rel.length + 1)
            .split(":")
            .slice(0, 2)
            .join(":"),
        );
      expect(positions).toEqual(fx.errors.map((e) => `${e.line}:${e.column}`));
    }
    // Nothing was written beside the state file, and nothing at all went to the cloud.
    expect(existsSync(statePath)).toBe(false);
    expect(existsSync(stateDir) ? readdirSync(stateDir) : []).toEqual([]);
  });
});

describe("after all the malformed stacks", () => {
  it("the emulator received no request at all", async () => {
    const s = await stats(ws.emu);
    expect(totalRequests(s), JSON.stringify(s.requests)).toBe(0);
  });

  it("no state file appeared anywhere in the temp dir", () => {
    const found = existsSync(ws.dir)
      ? readdirSync(ws.dir, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith(".json"))
      : [];
    expect(found).toEqual([]);
  });
});
