// `npm test` (and so CI) must fail when a test fails. The test PostgreSQL server's package
// registers an exit hook that called process.exit(0) on `beforeExit`, so a run with failing tests
// exited 0 and CI passed it (seen in a clean-clone run). This runs vitest, with the project's
// global setup, on a test that always fails, and asserts the exit status.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

it("a run with a failing test exits non-zero", { timeout: 120_000 }, () => {
  const vitest = join(REPO, "node_modules", "vitest", "vitest.mjs");
  const r = spawnSync(process.execPath, [vitest, "run", "--config", "test/fixtures/exit-status/vitest.config.ts", "test/fixtures/exit-status/always-fails.fixture.ts"], { cwd: REPO, encoding: "utf8", env: { ...process.env, CI: "true" } });
  expect(`${r.stdout}${r.stderr}`).toContain("fails on purpose");
  expect(r.status).toBe(1);
});
