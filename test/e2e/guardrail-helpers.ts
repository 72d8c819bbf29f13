// Helpers of the guardrail tests: rules files written as YAML, and the SARIF 2.1.0 schema (OASIS's,
// vendored from oasis-tcs/sarif-spec: sarif-2.1/schema/sarif-schema-2.1.0.json) as a validator.
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { createRequire } from "node:module";
import type { Ajv } from "ajv";
import { expect } from "vitest";

const SCHEMA = JSON.parse(
  readFileSync(new URL("../fixtures/sarif/sarif-schema-2.1.0.json", import.meta.url), "utf8"),
) as object;

/** Expects `log` to validate against the SARIF 2.1.0 schema. */
export function expectValidSarif(log: unknown): void {
  // CommonJS modules, required as src/schemas/index.ts requires ajv-formats.
  const require = createRequire(import.meta.url);
  const Draft04 = (require("ajv-draft-04") as { default: new (o: object) => Ajv }).default;
  const ajv = new Draft04({ allErrors: true, strict: false });
  (require("ajv-formats") as { default: (a: Ajv) => Ajv }).default(ajv);
  const validate = ajv.compile(SCHEMA);
  expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
}

/** Writes `doc` as the rules file `<name>.rules.yaml` in `ws.dir`; its path. */
export async function writeRules(ws: { readonly dir: string }, name: string, doc: unknown): Promise<string> {
  const file = join(ws.dir, `${name}.rules.yaml`);
  await writeFile(file, stringify(doc));
  return file;
}
