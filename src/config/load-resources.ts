// The `resources:` section of a stack: each resource's type, properties and options, with the
// checks that need no network (literal values, duplicate grants, ignoreChanges, import IDs).
import { type Diagnostic } from "../diagnostics/diagnostic.js";
import { functionDriver, resourceDriver, suggestToken, RESOURCE_TOKENS } from "../drivers/registry.js";
import type { IamDriver } from "../drivers/types.js";
import type { ResourceDecl } from "./model.js";
import { collectRefs, isLiteral } from "./references.js";
import { valueAt } from "./schema-diagnostics.js";
import { declaredAt, errorAt as at, type SourceDocument } from "./source.js";
import { ClaimIndex, conflictSummary } from "../drivers/claims.js";
import { type Each, forEachInstances, instanceAddress, substituteEach } from "./for-each.js";
import type { Scope } from "./resolve.js";

export interface Defaults {
  project?: string;
  location?: string;
}

const objectOr = (v: unknown): Record<string, unknown> => (v && typeof v === "object" ? (v as Record<string, unknown>) : {});

function unknownType(src: SourceDocument, name: string, type: string): Diagnostic {
  const isFn = functionDriver(type) !== undefined;
  return at(src, ["resources", name, "type"], isFn ? `"${type}" is a function, not a resource type` : `unknown resource type "${type}" (did you mean "${suggestToken(type, "resource")}"?)`, {
    address: name,
    detail: isFn ? `Call it from variables with fn::invoke. Resource types: ${RESOURCE_TOKENS.join(", ")}.` : `Known resource types: ${RESOURCE_TOKENS.join(", ")}.`,
  });
}

function declaration(src: SourceDocument, name: string, raw: Record<string, unknown>, driver: IamDriver, diags: Diagnostic[], each?: Each): ResourceDecl {
  const written = objectOr(raw.properties);
  const opts = objectOr(raw.options);
  const path = ["resources", name];
  const properties = each ? (substituteEach(written, each, [...path, "properties"], src, diags) as Record<string, unknown>) : written;
  // In a forEach, the import ID is a template like the properties ($$ for a literal "$").
  const importId = each && typeof opts.import === "string" ? String(substituteEach(opts.import, each, [...path, "options", "import"], src, diags)).replace(/\$\$/g, "$") : opts.import;
  return {
    name: each ? instanceAddress(name, each.key) : name,
    decl: name,
    ...(each ? { each } : {}),
    type: String(raw.type),
    driver,
    properties,
    options: {
      dependsOn: Array.isArray(opts.dependsOn) ? opts.dependsOn.map(String) : [],
      protect: opts.protect === true,
      ignoreChanges: Array.isArray(opts.ignoreChanges) ? opts.ignoreChanges.map(String) : [],
      ...(typeof importId === "string" ? { import: importId } : {}),
      ...(opts.forEach !== undefined ? { forEach: opts.forEach } : {}),
    },
    refs: collectRefs(src, properties, [...path, "properties"], diags),
  };
}

/** The checks of one resource that need only its own literal values; `ownership` finds duplicates. */
function checkResource(src: SourceDocument, decl: ResourceDecl, defaults: Defaults, ownership: ClaimIndex<string>, diags: Diagnostic[]): void {
  const { name, driver, properties } = decl;
  const path = ["resources", decl.decl];
  // Literal values are checked now, before any network call; interpolated ones after resolution.
  const { inputs, problems } = driver.normalize(properties, defaults);
  for (const p of problems) {
    const v = valueAt(properties, p.path.slice(0, 1));
    if (v === undefined || !isLiteral(v)) continue;
    // A value of the wrong type (a map where a member belongs…) was reported by the schema check.
    if (typeof valueAt(properties, p.path) !== "string") continue;
    diags.push(at(src, [...path, "properties", ...p.path], `${name}: ${p.message}`, { address: name }));
  }
  if (isLiteral(properties) && problems.length === 0) {
    const claims = driver.claims(inputs);
    const c = ownership.conflict(claims);
    if (!c) ownership.hold(claims, name);
    else {
      const other = c.owner;
      const [summary, detail] =
        c.kind === "binding"
          ? [`resources "${other}" and "${name}" both manage role ${inputs.role}${inputs.condition ? ` (condition "${inputs.condition.title}")` : ""} on ${inputs.name}`, "Only one binding resource can be used per role (and condition); merge their members."]
          : c.kind === "member"
            ? [`resources "${other}" and "${name}" both grant ${inputs.member} role ${inputs.role} on ${inputs.name}`, "Remove one of the duplicate member resources."]
            : [conflictSummary(c, name, claims[0]!), "Remove one of them, or move the grant into the resource that manages the whole binding or policy."];
      diags.push(at(src, path, summary, { key: true, address: name, detail: `"${other}" is declared at ${declaredAt(src, other)}. ${detail}` }));
    }
  }
  decl.options.ignoreChanges.forEach((p, i) => {
    const inputNames: readonly string[] = driver.inputFields;
    if (!inputNames.includes(p)) diags.push(at(src, [...path, "options", "ignoreChanges", i], `${name}: ignoreChanges names "${p}", which is not an input of ${decl.type}`, { address: name, detail: `Inputs: ${inputNames.join(", ")}.` }));
  });
  if (decl.options.import !== undefined) {
    const t = driver.parseImportId(decl.options.import, defaults);
    if (typeof t === "string") diags.push(at(src, [...path, "options", "import"], `${name}: ${t}`, { address: name }));
  }
}

/** How forEach collections are evaluated when the stack loads. */
export interface ForEachContext {
  scope: Scope;
  /** No error for a collection that waits on an input without a value */
  lenient: boolean;
}

/** The declarations of one resource: itself, or one per element of its forEach. Problems in
 *  `${each.…}` are reported once, not once per instance. */
function declarations(src: SourceDocument, name: string, raw: Record<string, unknown>, driver: IamDriver, forEach: ForEachContext, diags: Diagnostic[]): ResourceDecl[] {
  const opts = objectOr(raw.options);
  if (!Object.hasOwn(opts, "forEach")) return [declaration(src, name, raw, driver, diags)];
  const instances = forEachInstances(src, opts.forEach, ["resources", name, "options", "forEach"], forEach.scope, forEach.lenient, diags) ?? [];
  const found: Diagnostic[] = [];
  const decls: ResourceDecl[] = [];
  for (const each of instances) {
    const before = found.length;
    const decl = declaration(src, name, raw, driver, found, each);
    // An instance whose ${each.…} failed is left out (its text would be reported again).
    if (found.length === before) decls.push(decl);
  }
  const seen = new Set<string>();
  for (const d of found) {
    const k = `${d.line}:${d.column}:${d.summary}`;
    if (!seen.has(k)) diags.push(d);
    seen.add(k);
  }
  return decls;
}

/** The resources whose type is known, in document order (a forEach's instances in its order). */
export function loadResources(src: SourceDocument, resourcesRaw: Record<string, unknown>, defaults: Defaults, forEach: ForEachContext, diags: Diagnostic[]): Map<string, ResourceDecl> {
  const resources = new Map<string, ResourceDecl>();
  const ownership = new ClaimIndex<string>();
  for (const [name, value] of Object.entries(resourcesRaw)) {
    if (!value || typeof value !== "object") continue;
    const raw = value as Record<string, unknown>;
    const driver = resourceDriver(String(raw.type ?? ""));
    if (!driver) {
      if (typeof raw.type === "string") diags.push(unknownType(src, name, raw.type));
      continue;
    }
    for (const decl of declarations(src, name, raw, driver, forEach, diags)) {
      resources.set(decl.name, decl);
      checkResource(src, decl, defaults, ownership, diags);
    }
  }
  return resources;
}
