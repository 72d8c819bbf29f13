// The validators compiled at build time (scripts/build-validators.mjs → dist/schemas/
// precompiled.cjs) are used by the built CLI: they must be those of the current schemas and give
// exactly the errors the validators compiled at run time give.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const PRECOMPILED = join(REPO, "dist/schemas/precompiled.cjs");
type Schemas = typeof import("../../src/schemas/index.js");
const schemas = (await import(pathToFileURL(join(REPO, "dist/schemas/index.js")).href)) as Schemas;
const precompiled = createRequire(import.meta.url)(PRECOMPILED) as Record<string, unknown> & {
  digest: string;
  refs: string[];
};

/** Stack-shaped values: the invalid fixtures and the examples (and their parts). */
function samples(): unknown[] {
  const dirs = [
    join(REPO, "test/fixtures/invalid"),
    ...readdirSync(join(REPO, "examples")).map((d) => join(REPO, "examples", d)),
  ];
  const out: unknown[] = [{}, [], null, "text"];
  for (const dir of dirs) {
    if (!existsSync(dir) || !dir.match(/invalid|examples/)) continue;
    for (const f of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
      let doc: Record<string, unknown>;
      try {
        doc = parse(readFileSync(join(dir, f), "utf8")) as Record<string, unknown>;
      } catch {
        continue;
      }
      out.push(doc, doc?.resources, doc?.variables ? Object.values(doc.variables as object)[0] : undefined);
      // Resource inputs and function arguments, for the drivers' validators.
      for (const r of Object.values((doc?.resources ?? {}) as Record<string, { properties?: unknown }>))
        out.push(r?.properties);
      for (const v of Object.values(
        (doc?.variables ?? {}) as Record<string, { "fn::invoke"?: { arguments?: unknown } }>,
      ))
        out.push(v?.["fn::invoke"]?.arguments);
    }
  }
  return out;
}

describe("build-time validators", () => {
  it("were compiled from the current schemas/ (npm run build)", () => {
    expect(precompiled.digest).toBe(schemas.schemasDigest());
  });

  it("give the errors of the validators compiled at run time", async () => {
    const ajv = schemas.newAjv();
    const values = samples();
    expect(values.length).toBeGreaterThan(30);
    const registry = (await import(
      pathToFileURL(join(REPO, "dist/drivers/registry.js")).href
    )) as typeof import("../../src/drivers/registry.js");
    expect(precompiled.refs).toEqual([...new Set([...schemas.PRECOMPILED_REFS, ...registry.driverSchemaRefs()])]);
    for (const [i, ref] of precompiled.refs.entries()) {
      const built = schemas.validator(ref);
      expect(built, "the built CLI uses the build-time validator").toBe(precompiled[`v${i}`]);
      const compiled = ajv.getSchema(schemas.schemaId(ref))!;
      let invalid = 0;
      for (const v of values) {
        const a = compiled(v) ? [] : compiled.errors;
        const b = built(v) ? [] : built.errors;
        expect(b, `${ref} on ${JSON.stringify(v)?.slice(0, 80)}`).toEqual(a);
        if (a?.length) invalid++;
      }
      expect(invalid).toBeGreaterThan(5);
    }
  });
});
