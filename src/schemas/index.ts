// Runtime access to schemas/: one ajv instance that knows every schema, so cross-file $refs
// resolve, and compiled validators cached per schema id.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

/** schemas/ at the package root (src/schemas and dist/schemas are both two levels down). */
export const SCHEMAS_DIR = fileURLToPath(new URL("../../schemas/", import.meta.url));
const BASE = "https://converge.dev/schemas/";

let ajv: Ajv | undefined;
const cache = new Map<string, ValidateFunction>();

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : f.endsWith(".schema.json") ? [p] : [];
  });
}

function instance(): Ajv {
  if (ajv) return ajv;
  ajv = new Ajv({ allErrors: true, verbose: true, strict: false, allowUnionTypes: true });
  addFormats(ajv);
  for (const file of walk(SCHEMAS_DIR)) ajv.addSchema(JSON.parse(readFileSync(file, "utf8")));
  return ajv;
}

/**
 * A validator for a schema file or one of its definitions, e.g. `state.schema.json` or
 * `types/get-federation.schema.json#/definitions/Federation`.
 */
export function validator(ref: string): ValidateFunction {
  let v = cache.get(ref);
  if (!v) {
    const a = instance();
    v = a.getSchema(BASE + ref);
    if (!v) throw new Error(`unknown schema ${ref}`);
    cache.set(ref, v);
  }
  return v;
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
