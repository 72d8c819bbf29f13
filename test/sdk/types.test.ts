// The SDK's types, as a consumer sees them: tsc compiles test/fixtures/sdk-types (which imports
// the package by name, so the built declarations dist/*.d.ts are what is checked) and the
// TypeScript quickstart. Each `@ts-expect-error` line there (a wrong field, a missing required
// one, a wrong type, an unknown output…) must be an error, or tsc fails.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

it("typed constructor arguments, outputs, invokes and automation compile, and the wrong ones do not", async () => {
  expect(existsSync(`${REPO}dist/index.d.ts`), "run npm run build first").toBe(true);
  const tsc = `${REPO}node_modules/typescript/bin/tsc`;
  const run = await promisify(execFile)(process.execPath, [tsc, "-p", "test/fixtures/sdk-types"], { cwd: REPO }).catch(
    (e: { stdout: string; code: number }) => e,
  );
  expect(run.stdout).toBe("");
}, 120_000);
