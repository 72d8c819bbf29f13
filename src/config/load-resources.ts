// The `resources:` section of a stack: each resource's type, properties and options, with the
// checks that need no network (literal values, duplicate grants, ignoreChanges, import IDs).
import { addressText } from "../diagnostics/listed.js";
import { type Diagnostic } from "../diagnostics/diagnostic.js";
import { functionDriver, resourceDriver, suggestToken, RESOURCE_TOKENS } from "../drivers/registry.js";
import type { Claim, IamDriver, IamInputs } from "../drivers/types.js";
import type { Each, ForEachInstances, ResourceDecl } from "./model.js";
import { collectRefs, isLiteral } from "./references.js";
import { propertySchemaDiagnostic, valueAt } from "./schema-diagnostics.js";
import { errorAt as at, formatPath, type SourceDocument } from "../yaml/source.js";
import { declaredAt } from "../language/addresses.js";
import { ClaimIndex, type Conflict, conflictSummary } from "../claims/conflict-rule.js";
import { forEachInstances, substituteEach } from "./for-each.js";
import { instanceAddress } from "../language/addresses.js";
import { type Scope, resolveValue } from "../language/resolve.js";
import { UNKNOWN, containsUnknown, hasInterpolation } from "../language/expressions.js";
import { plain } from "../language/sensitive.js";
import { validate } from "../schemas/index.js";
import { pushAll } from "../base/arrays.js";

export interface Defaults {
  project?: string;
  location?: string;
}

const objectOr = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" ? (v as Record<string, unknown>) : {};

function unknownType(src: SourceDocument, name: string, type: string): Diagnostic {
  const isFn = functionDriver(type) !== undefined;
  return at(
    src,
    ["resources", name, "type"],
    isFn
      ? `"${type}" is a function, not a resource type`
      : `unknown resource type "${type}" (did you mean "${suggestToken(type, "resource")}"?)`,
    {
      address: name,
      detail: isFn
        ? `Call it from variables with fn::invoke. Resource types: ${RESOURCE_TOKENS.join(", ")}.`
        : `Known resource types: ${RESOURCE_TOKENS.join(", ")}.`,
    },
  );
}

/** Options that are not a map read as none (one object for all of them: only read). */
const NO_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({});
const optionsOf = (raw: Record<string, unknown>): Readonly<Record<string, unknown>> => {
  const o = raw.options;
  return o && typeof o === "object" ? (o as Record<string, unknown>) : NO_OPTIONS;
};

/** A declaration's options, keys in the order they always had (no spread: one object built once). */
function resourceOptions(opts: Readonly<Record<string, unknown>>, importId: unknown): ResourceDecl["options"] {
  const options: ResourceDecl["options"] = {
    dependsOn: Array.isArray(opts.dependsOn) ? opts.dependsOn.map(String) : [],
    protect: opts.protect === true,
    ignoreChanges: Array.isArray(opts.ignoreChanges) ? opts.ignoreChanges.map(String) : [],
  };
  if (typeof importId === "string") options.import = importId;
  if (opts.retainOnDelete === true) options.retainOnDelete = true;
  if (opts.forEach !== undefined) options.forEach = opts.forEach;
  return options;
}

function declaration(
  src: SourceDocument,
  name: string,
  raw: Record<string, unknown>,
  driver: IamDriver,
  diags: Diagnostic[],
  each?: Each,
  literal = false,
): ResourceDecl {
  const written = objectOr(raw.properties);
  const opts = optionsOf(raw);
  const properties = each
    ? (substituteEach(written, each, ["resources", name, "properties"], src, diags) as Record<string, unknown>)
    : written;
  // In a forEach, the import ID is a template like the properties ($$ for a literal "$").
  const importId =
    each && typeof opts.import === "string"
      ? String(substituteEach(opts.import, each, ["resources", name, "options", "import"], src, diags)).replace(
          /\$\$/g,
          "$",
        )
      : opts.import;
  const type = String(raw.type);
  const options = resourceOptions(opts, importId);
  const refs = literal ? [] : collectRefs(src, properties, ["resources", name, "properties"], diags);
  return each
    ? { name: instanceAddress(name, each.key), decl: name, each, type, driver, properties, options, refs }
    : { name, decl: name, type, driver, properties, options, refs };
}

/** The diagnostic of two resources claiming the same grant (`c`). */
function conflictDiagnostic(
  src: SourceDocument,
  decl: ResourceDecl,
  inputs: IamInputs,
  claims: readonly Claim[],
  c: Conflict<string>,
): Diagnostic {
  const { name } = decl;
  const other = c.owner;
  const [summary, detail] =
    c.kind === "binding"
      ? [
          `resources ${addressText(other)} and ${addressText(name)} both manage role ${inputs.role}` +
            `${inputs.condition ? ` (condition "${inputs.condition.title}")` : ""} on ${inputs.name}`,
          "Only one binding resource can be used per role (and condition); merge their members.",
        ]
      : c.kind === "member"
        ? [
            `resources ${addressText(other)} and ${addressText(name)} both grant ${inputs.member} ` +
              `role ${inputs.role} on ${inputs.name}`,
            "Remove one of the duplicate member resources.",
          ]
        : [
            conflictSummary(c, name, claims[0]!),
            "Remove one of them, or move the grant into the resource that manages the whole binding or policy.",
          ];
  return at(src, ["resources", decl.decl], summary, {
    key: true,
    address: name,
    detail: `${addressText(other)} is declared at ${declaredAt(src, other)}. ${detail}`,
  });
}

/**
 * A resource's properties with what is known when the stack loads resolved: inputs, variables
 * built from them, functions of those (forEach keys and values were substituted already). What
 * waits on a resource output or a function result (fn::invoke) stays UNKNOWN. Undefined when
 * nothing in them is interpolated or called (they are then as written). A problem resolving them
 * is reported here, unless one was reported in them already (a malformed `${`, a function of the
 * wrong shape: the loader's own messages say it better, and once is enough for a forEach).
 */
function loadTimeProperties(
  src: SourceDocument,
  decl: ResourceDecl,
  scope: Scope,
  diags: Diagnostic[],
  literal: boolean,
): Record<string, unknown> | undefined {
  if (literal || isLiteral(decl.properties)) return undefined;
  const found: Diagnostic[] = [];
  const resolved = resolveValue(
    decl.properties,
    ["resources", decl.decl, "properties"],
    (root) => scope(root) ?? { value: UNKNOWN },
    src,
    found,
  );
  const at = formatPath(["resources", decl.decl, "properties"]);
  if (found.length && !diags.some((d) => d.path === at || d.path?.startsWith(`${at}.`) || d.path?.startsWith(`${at}[`)))
    pushAll(diags, found);
  return plain(resolved) as Record<string, unknown>;
}

/** The top-level properties that the stack schema did not check (they were interpolated) and
 *  are known now, checked against the type's schema; returns the names of those it refuses. */
function checkResolvedSchema(
  src: SourceDocument,
  decl: ResourceDecl,
  known: Record<string, unknown>,
  diags: Diagnostic[],
): Set<string> {
  const checked: Record<string, unknown> = {};
  for (const k of Object.keys(known))
    if (!isLiteral(decl.properties[k]) && !containsUnknown(known[k])) checked[k] = known[k];
  const refused = new Set<string>();
  if (Object.keys(checked).length === 0) return refused;
  for (const e of validate(decl.driver.inputsSchema, checked)) {
    const first = e.instancePath.split("/")[1];
    // Missing properties and the object's own shape were the stack schema's to check.
    if (first === undefined || !Object.hasOwn(checked, first)) continue;
    refused.add(first);
    diags.push(propertySchemaDiagnostic(src, decl.name, decl.decl, e));
  }
  return refused;
}

/** What the driver may normalise of a resource's properties: those written as literals (the stack
 *  schema checked them) and those resolved now that are known and fit the type's schema; the
 *  others are left out (unknown, or already reported). */
function checkable(
  written: Record<string, unknown>,
  resolved: Record<string, unknown>,
  refused: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(written)) {
    if (isLiteral(written[k])) out[k] = written[k];
    else if (!refused.has(k) && !containsUnknown(resolved[k])) out[k] = resolved[k];
  }
  return out;
}

/** The checks of one resource that need only what is known when the stack loads (its literal
 *  values, and those resolved from inputs: `scope`); `ownership` finds duplicates. */
function checkResource(
  src: SourceDocument,
  decl: ResourceDecl,
  defaults: Defaults,
  ownership: ClaimIndex<string>,
  forEach: ForEachContext,
  diags: Diagnostic[],
): void {
  const { name, driver } = decl;
  const scope = forEach.scope;
  const resolved = loadTimeProperties(src, decl, scope, diags, forEach.literal === true);
  const properties = resolved
    ? checkable(decl.properties, resolved, checkResolvedSchema(src, decl, resolved, diags))
    : decl.properties;
  // Known values are checked now, before any network call; the others after resolution.
  const { inputs, problems } = driver.normalize(properties, defaults);
  for (const p of problems) {
    const v = valueAt(properties, p.path.slice(0, 1));
    if (v === undefined) continue;
    // A value of the wrong type (a map where a member belongs…) was reported by the schema check.
    if (typeof valueAt(properties, p.path) !== "string") continue;
    diags.push(at(src, ["resources", decl.decl, "properties", ...p.path], `${name}: ${p.message}`, { address: name }));
  }
  const known = Object.keys(properties).length === Object.keys(decl.properties).length;
  if (problems.length === 0 && known) {
    const claims = driver.claims(inputs);
    const c = ownership.conflict(claims);
    if (!c) ownership.hold(claims, name);
    else diags.push(conflictDiagnostic(src, decl, inputs, claims, c));
  }
  if (problems.length === 0 && known) {
    if (resolved) decl.loadTimeProperties = resolved;
    else decl.loadTimeInputs = { project: defaults.project, location: defaults.location, inputs };
  }
  const { ignoreChanges } = decl.options;
  for (let i = 0; i < ignoreChanges.length; i++) {
    const p = ignoreChanges[i]!;
    const inputNames: readonly string[] = driver.inputFields;
    if (!inputNames.includes(p))
      diags.push(
        at(
          src,
          ["resources", decl.decl, "options", "ignoreChanges", i],
          `${name}: ignoreChanges names "${p}", which is not an input of ${decl.type}`,
          { address: name, detail: `Inputs: ${inputNames.join(", ")}.` },
        ),
      );
  }
  const importId = loadTimeImportId(src, decl, scope);
  if (importId !== undefined) {
    const t = driver.parseImportId(importId, defaults);
    if (typeof t === "string")
      diags.push(at(src, ["resources", decl.decl, "options", "import"], `${name}: ${t}`, { address: name }));
  }
}

/** The import ID, with the inputs (and variables built from them) it uses resolved into it now,
 *  as the properties' are; undefined while one has no value (validate). An ID with a `${…}` that
 *  names no input nor variable is taken as written, as before inputs could be used in it (import
 *  --generate writes live members and titles holding "${" as they are). */
function loadTimeImportId(src: SourceDocument, decl: ResourceDecl, scope: Scope): string | undefined {
  const raw = decl.options.import;
  if (raw === undefined || decl.each || !hasInterpolation(raw)) return raw;
  const path = ["resources", decl.decl, "options", "import"];
  let literal = false;
  const known: Scope = (root) => scope(root) ?? ((literal = true), { value: UNKNOWN });
  const found: Diagnostic[] = [];
  const value = plain(resolveValue(raw, path, known, src, found));
  if (literal || found.length > 0) return raw;
  if (typeof value !== "string") return undefined;
  decl.options.import = value;
  return value;
}

/** How forEach collections are evaluated when the stack loads. */
export interface ForEachContext {
  scope: Scope;
  /** No error for a collection that waits on an input without a value */
  lenient: boolean;
  /** Where the strings of collections computed from a secret go (the stack's secrets) */
  secrets: Set<string>;
  /** Filled in: the instance keys of each forEach whose collection is known (none when not) */
  instances: Map<string, ForEachInstances>;
  /** The provider's project or location waits on an input without a value: names are not
   *  checked (that input's error is the one error) */
  unchecked?: boolean;
  /** Every value of the stack is written as a literal: no "${" and no function call anywhere
   *  (SourceDocument.literalDocument), so no walk looks for them */
  literal?: boolean;
}

/** The declarations of a resource with a forEach: one per element. Problems in `${each.…}` are
 *  reported once, not once per instance. */
function eachDeclarations(
  src: SourceDocument,
  name: string,
  raw: Record<string, unknown>,
  driver: IamDriver,
  forEach: ForEachContext,
  diags: Diagnostic[],
): ResourceDecl[] {
  const opts = optionsOf(raw);
  const evaluated = forEachInstances(
    src,
    opts.forEach,
    ["resources", name, "options", "forEach"],
    forEach.scope,
    forEach.lenient,
    diags,
    forEach.secrets,
  );
  if (evaluated) forEach.instances.set(name, { keys: evaluated.map((e) => e.key), fields: driver.outputNames });
  const instances = evaluated ?? [];
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
export function loadResources(
  src: SourceDocument,
  resourcesRaw: Record<string, unknown>,
  defaults: Defaults,
  forEach: ForEachContext,
  diags: Diagnostic[],
): Map<string, ResourceDecl> {
  const resources = new Map<string, ResourceDecl>();
  const ownership = new ClaimIndex<string>();
  // Keys then a look-up each: no [name, value] array per resource.
  for (const name of Object.keys(resourcesRaw)) {
    const value = resourcesRaw[name];
    if (!value || typeof value !== "object") continue;
    const raw = value as Record<string, unknown>;
    const driver = resourceDriver(String(raw.type ?? ""));
    if (!driver) {
      if (typeof raw.type === "string") diags.push(unknownType(src, name, raw.type));
      continue;
    }
    if (!Object.hasOwn(optionsOf(raw), "forEach")) {
      const decl = declaration(src, name, raw, driver, diags, undefined, forEach.literal);
      resources.set(decl.name, decl);
      if (!forEach.unchecked) checkResource(src, decl, defaults, ownership, forEach, diags);
      continue;
    }
    for (const decl of eachDeclarations(src, name, raw, driver, forEach, diags)) {
      resources.set(decl.name, decl);
      if (!forEach.unchecked) checkResource(src, decl, defaults, ownership, forEach, diags);
    }
  }
  return resources;
}
