// Runtime access to schemas/: one ajv instance that knows every schema, so cross-file $refs
// resolve, and compiled validators cached per schema id. The validators a stack command needs
// first are compiled at build time (scripts/build-validators.mjs → dist/schemas/precompiled.cjs,
// ajv's standalone code, one module per validator, loaded on first use): used while the schemas'
// digest matches, so start-up neither loads ajv nor compiles the stack schema; anything else (or
// from src/ in tests) compiles here.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv";

/** schemas/ at the package root (src/schemas and dist/schemas are both two levels down). */
export const SCHEMAS_DIR = fileURLToPath(new URL("../../schemas/", import.meta.url));
const BASE = "https://converge.dev/schemas/";

/** ajv's options, for the validators compiled here and at build time. */
export const AJV_OPTIONS: Options = { allErrors: true, verbose: true, strict: false, allowUnionTypes: true };

/** The validators compiled at build time, with the drivers' (src/drivers/registry.ts). */
export const PRECOMPILED_REFS: readonly string[] = [
  "stack.schema.json",
  "stack.schema.json#/definitions/Invoke",
  "state.schema.json",
  "iam-policy.schema.json",
  "emulator-seed.schema.json",
  "plan.schema.json",
  "types/get-federation.schema.json#/definitions/Federation",
];

const require = createRequire(import.meta.url);
let ajv: Ajv | undefined;
const cache = new Map<string, ValidateFunction>();

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : f.endsWith(".schema.json") ? [p] : [];
  });
}

/** The schema files, in a fixed order. */
function schemaFiles(): string[] {
  return walk(SCHEMAS_DIR).sort();
}

/** A digest of every schema file (names and contents): the build-time validators are for it. */
export function schemasDigest(): string {
  // node:crypto is loaded only here: a run whose schema files are as built never hashes them.
  const { createHash } = require("node:crypto") as typeof import("node:crypto");
  const h = createHash("sha256");
  for (const file of schemaFiles())
    h.update(file.slice(SCHEMAS_DIR.length)).update("\0").update(readFileSync(file)).update("\0");
  return h.digest("hex");
}

/** Each schema file's name, size and modification time ("name size mtimeMs", in order). */
export function schemaFileStats(): string[] {
  return schemaFiles().map((file) => {
    const st = statSync(file);
    return `${file.slice(SCHEMAS_DIR.length)} ${st.size} ${st.mtimeMs}`;
  });
}

/** Whether the schemas are those `built` was compiled from: every file's size and modification
 *  time as at the build (then the files were not touched since: no need to read them), or else
 *  the digest of their contents. */
function sameSchemas(built: Precompiled): boolean {
  const stats = schemaFileStats();
  if (built.stats && stats.length === built.stats.length && stats.every((s, i) => s === built.stats![i])) return true;
  return built.digest === schemasDigest();
}

/** An ajv instance knowing every schema; `options` adds to AJV_OPTIONS (the build adds code.source). */
export function newAjv(options: Options = {}): Ajv {
  // ajv and ajv-formats are CommonJS, required here: only a compile needs them.
  const { Ajv: AjvClass } = require("ajv") as typeof import("ajv");
  const formats = require("ajv-formats") as { default: (a: Ajv) => Ajv };
  const a = new AjvClass({ ...AJV_OPTIONS, ...options });
  formats.default(a);
  for (const file of schemaFiles()) a.addSchema(JSON.parse(readFileSync(file, "utf8")));
  return a;
}

/** dist/schemas/precompiled.cjs: validators v0, v1… of `refs`, compiled from schemas of `digest`
 *  (whose files had `stats`, see schemaFileStats). */
type Precompiled = Record<string, ValidateFunction> & { digest?: string; refs?: string[]; stats?: string[] };
let precompiled: Precompiled | null | undefined;

/** The build-time validator of `ref`, if there is one for these schemas. */
function precompiledValidator(ref: string): ValidateFunction | undefined {
  if (precompiled === undefined) {
    // ../schemas/: from dist/schemas/ and from the bundled CLI's dist/bundle/ alike.
    const file = fileURLToPath(new URL("../schemas/precompiled.cjs", import.meta.url));
    let mod: Precompiled | undefined;
    try {
      mod = require(file) as Precompiled;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw e;
    }
    precompiled = mod && sameSchemas(mod) ? mod : null;
  }
  const i = precompiled?.refs?.indexOf(ref) ?? -1;
  return i < 0 ? undefined : precompiled?.[`v${i}`];
}

/**
 * A validator for a schema file or one of its definitions, e.g. `state.schema.json` or
 * `types/get-federation.schema.json#/definitions/Federation`.
 */
export function validator(ref: string): ValidateFunction {
  let v = cache.get(ref) ?? precompiledValidator(ref);
  if (!v) {
    ajv ??= newAjv();
    v = ajv.getSchema(BASE + ref);
    if (!v) throw new Error(`unknown schema ${ref}`);
  }
  cache.set(ref, v);
  return v;
}

/** The id ajv knows a schema ref by. */
export function schemaId(ref: string): string {
  return BASE + ref;
}

export type { ErrorObject };

/** Validates and returns the ajv errors (empty when valid). */
export function validate(ref: string, value: unknown): ErrorObject[] {
  const v = validator(ref);
  return v(value) ? [] : [...(v.errors ?? [])];
}

/** A one-line description of ajv errors, for invariant failures and non-stack files. */
export function describeErrors(errors: readonly ErrorObject[]): string {
  return errors.map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`).join("; ");
}
