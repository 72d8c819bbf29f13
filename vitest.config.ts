import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // One PostgreSQL server for the run (the postgres backend's tests).
    globalSetup: ["test/postgres/global-setup.ts"],
  },
});
