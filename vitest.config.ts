import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    // Budgets, not expectations of speed: an end-to-end test starts several CLI processes, and on a
    // loaded machine (both cores busy elsewhere) each takes seconds. A test that hangs still fails.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two test files at a time: most of a file's time is the CLI processes it starts and waits
    // for, so two keep both cores of a CI runner busy (one left the run near 20 minutes).
    maxWorkers: 2,
    // One PostgreSQL server for the run (the postgres backend's tests).
    globalSetup: ["test/postgres/global-setup.ts"],
  },
});
