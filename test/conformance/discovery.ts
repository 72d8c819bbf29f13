// The vendored discovery documents (./discovery/), their methods, and their schemas as JSON
// Schema (compiled with Ajv) so that an answer can be checked against Google's description of
// it: no field the schema does not name, every value of its type and format, enums by name.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";

export const DISCOVERY_DIR = join(dirname(fileURLToPath(import.meta.url)), "discovery");
export const DOCUMENTS = [
  "gkebackup_v1",
  "aiplatform_v1beta1",
  "metastore_v1alpha",
  "cloudresourcemanager_v3",
] as const;
export type DocumentName = (typeof DOCUMENTS)[number];

interface DiscoverySchema {
  type?: string;
  format?: string;
  $ref?: string;
  enum?: string[];
  items?: DiscoverySchema;
  properties?: Record<string, DiscoverySchema>;
  additionalProperties?: DiscoverySchema;
}

export interface DiscoveryMethod {
  id: string;
  httpMethod: string;
  flatPath: string;
  parameters?: Record<string, { location: string; repeated?: boolean; type: string }>;
  request?: { $ref: string };
  response?: { $ref: string };
}

interface DiscoveryResource {
  methods?: Record<string, DiscoveryMethod>;
  resources?: Record<string, DiscoveryResource>;
}

export interface DiscoveryDocument extends DiscoveryResource {
  name: string;
  version: string;
  revision: string;
  schemas: Record<string, DiscoverySchema>;
}

export function readDocument(name: DocumentName): DiscoveryDocument {
  return JSON.parse(readFileSync(join(DISCOVERY_DIR, `${name}.json`), "utf8")) as DiscoveryDocument;
}

/** Every method of a document, depth first. */
export function methodsOf(doc: DiscoveryResource): DiscoveryMethod[] {
  const out: DiscoveryMethod[] = Object.values(doc.methods ?? {});
  for (const r of Object.values(doc.resources ?? {})) out.push(...methodsOf(r));
  return out;
}

const BASE64 = "^[A-Za-z0-9+/_-]*={0,2}$";
const RFC3339 = "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)$";

/** One discovery schema as JSON Schema (draft 7). */
function toJsonSchema(s: DiscoverySchema): Record<string, unknown> {
  if (s.$ref) return { $ref: `#/definitions/${s.$ref}` };
  const out: Record<string, unknown> = {};
  if (s.enum) out.enum = s.enum;
  switch (s.type) {
    case "string":
      out.type = "string";
      if (s.format === "byte") out.pattern = BASE64;
      if (s.format === "google-datetime") out.pattern = RFC3339;
      if (s.format === "int64" || s.format === "uint64") out.pattern = "^-?\\d+$";
      break;
    case "integer":
      out.type = "integer";
      break;
    case "array":
      out.type = "array";
      if (s.items) out.items = toJsonSchema(s.items);
      break;
    case "object":
      out.type = "object";
      if (s.properties) {
        out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toJsonSchema(v)]));
      }
      out.additionalProperties = s.additionalProperties ? toJsonSchema(s.additionalProperties) : false;
      break;
    case "any":
      // Discovery's "any" (google.protobuf.Value): any JSON value.
      break;
    default:
      if (s.type) out.type = s.type;
  }
  return out;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

/** The validator of schema `name` of document `doc`. */
export function schemaValidator(doc: DiscoveryDocument, name: string): ValidateFunction {
  const key = `${doc.name}_${doc.version}#${name}`;
  let v = compiled.get(key);
  if (!v) {
    const definitions = Object.fromEntries(Object.entries(doc.schemas).map(([k, s]) => [k, toJsonSchema(s)]));
    v = ajv.compile({ definitions, $ref: `#/definitions/${name}` });
    compiled.set(key, v);
  }
  return v;
}

/** google.rpc.Status as Google's JSON front end sends it: every error answer has this shape. */
export const ERROR_ENVELOPE = ajv.compile({
  type: "object",
  additionalProperties: false,
  required: ["error"],
  properties: {
    error: {
      type: "object",
      additionalProperties: false,
      required: ["code", "message", "status"],
      properties: {
        code: { type: "integer" },
        message: { type: "string" },
        status: { type: "string", pattern: "^[A-Z_]+$" },
        details: {
          type: "array",
          items: { type: "object", required: ["@type"], properties: { "@type": { type: "string" } } },
        },
      },
    },
  },
});
