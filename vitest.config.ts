import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two test files at a time: most of a file's time is the CLI processes it starts and waits
    // for, so two keep both cores of a CI runner busy (one left the run near 20 minutes).
    maxWorkers: 2,
    // One PostgreSQL server for the run (the postgres backend's tests).
    globalSetup: ["test/postgres/global-setup.ts"],
  },
});
