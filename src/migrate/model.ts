// What the readers of other tools' states (pulumi.ts, terraform.ts) give the mapping (mapping.ts):
// each resource of the source with its type, a readable name, its properties and where it is in
// the file. A value the source keeps secret is a SecretValue: its clear text is never kept.
import type { DocPath } from "../yaml/source.js";

/** The type of the stack input a secret becomes (schemas/stack.schema.json ConfigInput.type). */
export type SecretType = "string" | "number" | "boolean" | "list" | "map";

/** A value the source keeps secret (a Pulumi secret, a Terraform sensitive attribute). Only the
 *  type of its value is kept, when the source shows it. */
export class SecretValue {
  constructor(readonly type?: SecretType) {}
}

export interface SourceResource {
  /** Its address in the source: a Pulumi URN, a Terraform resource address. */
  address: string;
  /** Its type in the source: a Pulumi type token or a Terraform resource type. */
  type: string;
  /** The name its author gave it (a URN's last part, a Terraform name with its index). */
  name: string;
  /** Its properties (Pulumi's inputs, Terraform's attributes), secrets as SecretValue. */
  properties: Record<string, unknown>;
  /** Where the resource is in the file. */
  path: DocPath;
  /** Why it cannot be adopted whatever its type (a Terraform data source, a pending delete). */
  skip?: string;
}

/** The type of a JSON value as a stack input's type. */
export function typeOfValue(v: unknown): SecretType {
  if (Array.isArray(v)) return "list";
  if (v !== null && typeof v === "object") return "map";
  if (typeof v === "number" || typeof v === "boolean") return typeof v as SecretType;
  return "string";
}
