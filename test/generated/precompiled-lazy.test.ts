// The build-time validators (dist/schemas/precompiled.cjs and precompiled/v*.cjs) are used only
// for the schemas they were compiled from: when the schema files' sizes and modification times are
// as at the build, without reading them; when those differ, only if the contents' digest is the
// build's. Run on a copy of dist/schemas and schemas/ (so the repository's files stay untouched).
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of the built schemas module and of schemas/ (file times as `keepTimes` says). */
function copy(keepTimes: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), "converge-precompiled-"));
  dirs.push(dir);
  cpSync(join(REPO, "dist/schemas"), join(dir, "dist/schemas"), { recursive: true, preserveTimestamps: keepTimes });
  cpSync(join(REPO, "schemas"), join(dir, "schemas"), { recursive: true, preserveTimestamps: keepTimes });
  writeFileSync(join(dir, "package.json"), '{"type":"module"}');
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));
  return dir;
}

async function used(dir: string, ref: string, i: number): Promise<boolean> {
  const schemas = (await import(
    pathToFileURL(join(dir, "dist/schemas/index.js")).href
  )) as typeof import("../../src/schemas/index.js");
  const precompiled = createRequire(import.meta.url)(join(dir, "dist/schemas/precompiled.cjs")) as Record<
    string,
    unknown
  >;
  return schemas.validator(ref) === precompiled[`v${i}`];
}

describe("build-time validators, checked against the schema files", () => {
  it("record each schema file's size and time at the build", async () => {
    const precompiled = createRequire(import.meta.url)(join(REPO, "dist/schemas/precompiled.cjs")) as {
      stats: string[];
    };
    const schemas = (await import(
      pathToFileURL(join(REPO, "dist/schemas/index.js")).href
    )) as typeof import("../../src/schemas/index.js");
    expect(precompiled.stats).toEqual(schemas.schemaFileStats());
  });

  it("are used when the files are as built, and when only their times changed (same digest)", async () => {
    expect(await used(copy(true), "stack.schema.json", 0)).toBe(true);
    const touched = copy(true);
    const f = join(touched, "schemas/state.schema.json");
    utimesSync(f, new Date(), new Date(statSync(f).mtimeMs + 5000));
    expect(await used(touched, "state.schema.json", 2)).toBe(true);
  });

  it("are not used when a schema's contents changed", async () => {
    for (const keepTimes of [true, false]) {
      const dir = copy(keepTimes);
      const f = join(dir, "schemas/stack.schema.json");
      const before = statSync(f);
      writeFileSync(f, readFileSync(f, "utf8") + "\n");
      if (keepTimes) utimesSync(f, before.atime, before.mtime);
      expect(await used(dir, "stack.schema.json", 0)).toBe(false);
    }
  });
});
