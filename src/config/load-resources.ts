// The `resources:` section of a stack: each resource's type, properties and options, with the
// checks that need no network (literal values, duplicate grants, ignoreChanges, import IDs).
import { type Diagnostic } from "../diagnostics/diagnostic.js";
import { functionDriver, resourceDriver, suggestToken, RESOURCE_TOKENS } from "../drivers/registry.js";
import type { IamDriver } from "../drivers/types.js";
import type { ResourceDecl } from "./model.js";
import { collectRefs, isLiteral } from "./references.js";
import { valueAt } from "./schema-diagnostics.js";
import { errorAt as at, type SourceDocument } from "./source.js";
import { ClaimIndex, conflictSummary } from "../drivers/claims.js";

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

function declaration(src: SourceDocument, name: string, raw: Record<string, unknown>, driver: IamDriver, diags: Diagnostic[]): ResourceDecl {
  const properties = objectOr(raw.properties);
  const opts = objectOr(raw.options);
  return {
    name,
    type: String(raw.type),
    driver,
    properties,
    options: {
      dependsOn: Array.isArray(opts.dependsOn) ? opts.dependsOn.map(String) : [],
      protect: opts.protect === true,
      ignoreChanges: Array.isArray(opts.ignoreChanges) ? opts.ignoreChanges.map(String) : [],
      ...(typeof opts.import === "string" ? { import: opts.import } : {}),
    },
    refs: collectRefs(src, properties, ["resources", name, "properties"], diags),
  };
}

/** The checks of one resource that need only its own literal values; `ownership` finds duplicates. */
function checkResource(src: SourceDocument, decl: ResourceDecl, defaults: Defaults, ownership: ClaimIndex<string>, diags: Diagnostic[]): void {
  const { name, driver, properties } = decl;
  const path = ["resources", name];
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
      diags.push(at(src, path, summary, { key: true, address: name, detail }));
    }
  }
  decl.options.ignoreChanges.forEach((p, i) => {
    const inputNames = ["name", "role", "condition", driver.ownership === "binding" ? "members" : "member"];
    if (!inputNames.includes(p)) diags.push(at(src, [...path, "options", "ignoreChanges", i], `${name}: ignoreChanges names "${p}", which is not an input of ${decl.type}`, { address: name, detail: `Inputs: ${inputNames.join(", ")}.` }));
  });
  if (decl.options.import !== undefined) {
    const t = driver.parseImportId(decl.options.import, defaults);
    if (typeof t === "string") diags.push(at(src, [...path, "options", "import"], `${name}: ${t}`, { address: name }));
  }
}

/** The resources whose type is known, in document order. */
export function loadResources(src: SourceDocument, resourcesRaw: Record<string, unknown>, defaults: Defaults, diags: Diagnostic[]): Map<string, ResourceDecl> {
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
    const decl = declaration(src, name, raw, driver, diags);
    resources.set(name, decl);
    checkResource(src, decl, defaults, ownership, diags);
  }
  return resources;
}
