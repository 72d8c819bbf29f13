// The stack a migration writes, from the resources read and mapped: one resource per adoptable
// resource, named as its author named it, with options.import; a secret of the source becomes a
// secret input (config) of the stack, never its value; what cannot be adopted is listed.
import { escapeLiteral } from "../language/expressions.js";
import type { DocPath } from "../yaml/source.js";
import { mapResource, type ImportPiece } from "./mapping.js";
import { SecretValue, type SourceResource } from "./model.js";

export interface Unmapped {
  address: string;
  type: string;
  reason: string;
  path: DocPath;
}

export interface MigratedStack {
  resources: Record<string, unknown>;
  /** Secret inputs, one per secret value of the source. */
  config: Record<string, { type: string; secret: true; description: string }>;
  /** The first full object name, for the provider block. */
  firstName: string | undefined;
  unmapped: Unmapped[];
}

/** A resource or input name (schemas/stack.schema.json) made from an author's name. */
function stackNameFor(name: string, used: Set<string>, chars = /[^A-Za-z0-9_-]+/g): string {
  let base =
    name
      .replace(chars, "_")
      .replace(/^([^A-Za-z_])/, "_$1")
      .slice(0, 60) || "resource";
  if (base === "_") base = "resource";
  let out = base;
  for (let i = 2; used.has(out.toLowerCase()); i++) out = `${base}_${i}`;
  used.add(out.toLowerCase());
  return out;
}

/** The type of a secret whose value the source does not show, from where it is. */
function typeAt(path: string[]): string {
  if (path.length !== 1) return "string";
  return path[0] === "condition"
    ? "map"
    : ["members", "bindings", "auditConfigs"].includes(path[0]!)
      ? "list"
      : "string";
}

/** Turns values into a stack's: strings escaped (properties are interpolated), secrets `${input}`. */
class Writer {
  readonly config: MigratedStack["config"] = {};
  private readonly inputs = new Map<SecretValue, string>();
  constructor(private readonly used: Set<string>) {}

  input(s: SecretValue, resource: string, address: string, path: string[]): string {
    let name = this.inputs.get(s);
    if (name === undefined) {
      // An input's name is also an environment variable's (CONVERGE_VAR_name): no "-".
      name = stackNameFor([resource, ...path].join("_"), this.used, /[^A-Za-z0-9_]+/g);
      this.inputs.set(s, name);
      const what = path.length ? path.join(".") : "value";
      this.config[name] = {
        type: s.type ?? typeAt(path),
        secret: true,
        description: `${what} of ${address}, a secret there`,
      };
    }
    return name;
  }

  value(v: unknown, resource: string, address: string, path: string[]): unknown {
    if (v instanceof SecretValue) return `\${${this.input(v, resource, address, path)}}`;
    if (typeof v === "string") return escapeLiteral(v);
    if (Array.isArray(v)) return v.map((x, i) => this.value(x, resource, address, [...path, String(i)]));
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.value(x, resource, address, [...path, k])]));
    return v;
  }

  importId(pieces: ImportPiece[], resource: string, address: string): string {
    // An import ID without a ${…} is taken as written ($ and all); with one, it is a template.
    if (pieces.every((p) => typeof p === "string")) return pieces.join(" ");
    return pieces
      .map((p) => {
        if (typeof p === "string") return escapeLiteral(p);
        if (p instanceof SecretValue) return `\${${this.input(p, resource, address, ["id"])}}`;
        return `\${${this.input(p.of, resource, address, ["condition"])}.${p.field}}`;
      })
      .join(" ");
  }
}

/** The stack adopting `read`'s resources. Pure. */
export function migratedStack(read: SourceResource[]): MigratedStack {
  const used = new Set<string>();
  const w = new Writer(used);
  const resources: Record<string, unknown> = {};
  const unmapped: Unmapped[] = [];
  let firstName: string | undefined;
  for (const r of read) {
    const m = mapResource(r);
    if ("reason" in m) {
      unmapped.push({ address: r.address, type: r.type, reason: m.reason, path: r.path });
      continue;
    }
    const key = stackNameFor(r.name, used);
    if (firstName === undefined && typeof m.properties.name === "string" && m.properties.name.startsWith("projects/"))
      firstName = m.properties.name;
    const properties = w.value(m.properties, key, r.address, []);
    resources[key] = { type: m.token, properties, options: { import: w.importId(m.importId, key, r.address) } };
  }
  return { resources, config: w.config, firstName, unmapped };
}
