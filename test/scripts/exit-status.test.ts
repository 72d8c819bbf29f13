// `npm test` (and so CI) must fail when a test fails. The test PostgreSQL server's package
// registers an exit hook that called process.exit(0) on `beforeExit`, so a run with failing tests
// exited 0 and CI passed it (seen in a clean-clone run). This runs vitest, with the project's
// global setup, on a test that always fails, and asserts the exit status.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Runs vitest with the project's global setup (which starts the test PostgreSQL server) on one fixture. */
function runFixture(fixture: string) {
  const vitest = join(REPO, "node_modules", "vitest", "vitest.mjs");
  return spawnSync(
    process.execPath,
    [vitest, "run", "--config", "test/fixtures/exit-status/vitest.config.ts", `test/fixtures/exit-status/${fixture}`],
    { cwd: REPO, encoding: "utf8", env: { ...process.env, CI: "true" } },
  );
}

it("a run with a failing test exits non-zero", { timeout: 120_000 }, () => {
  const r = runFixture("always-fails.fixture.ts");
  expect(`${r.stdout}${r.stderr}`).toContain("fails on purpose");
  expect(r.status).toBe(1);
});

// The package's exit listener, once its beforeExit one is gone, threw "done is not a function"
// after a green run (exit 1 in a clean-clone CI run).
it("a run whose tests pass exits 0, with nothing thrown at exit", { timeout: 120_000 }, () => {
  const r = runFixture("always-passes.fixture.ts");
  expect(`${r.stdout}${r.stderr}`).not.toContain("is not a function");
  expect(r.status).toBe(0);
});
