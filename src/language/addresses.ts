// Resource addresses: a declaration's name, or `name["key"]` / `name[0]` for an instance of an
// `options.forEach` (Terraform's form, kept as is in state, plans and on the command line).
import type { SourceDocument } from "../yaml/source.js";

/** The address of one instance: `name["key"]` or `name[0]`. */
export function instanceAddress(name: string, key: string | number): string {
  return `${name}[${typeof key === "number" ? key : JSON.stringify(key)}]`;
}

/** An address split into its resource name and instance key (Terraform's `index`). */
export function splitAddress(address: string): { name: string; index?: string | number } {
  const m = /^([A-Za-z_][A-Za-z0-9_-]*)\[(\d+|"(?:[^"\\]|\\.)*")\]$/.exec(address);
  if (!m) return { name: address };
  return { name: m[1]!, index: m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : Number(m[2]) };
}

/** Whether `address` is a resource address: `name`, `name["key"]` or `name[0]`. */
export function isAddress(address: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(address) || splitAddress(address).index !== undefined;
}

/** Where a resource is declared, for a message that names another place: "stack.yaml:12:3". */
export function declaredAt(src: SourceDocument, resource: string): string {
  const pos = src.position(["resources", splitAddress(resource).name], { key: true });
  return `${src.file}:${pos.line}:${pos.column}`;
}
