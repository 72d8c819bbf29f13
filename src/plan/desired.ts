// A resource's desired inputs: its properties resolved, checked against the type's schema,
// normalised by its driver (full names, canonical members), resolved values linted, and its
// grant claimed (two resources may not manage the same one). Unknown parts stay unknown.
import { addressText } from "../diagnostics/listed.js";
import { declaredAt } from "../language/addresses.js";
import type { ResourceDecl } from "../config/model.js";
import { error } from "../diagnostics/diagnostic.js";
import { containsUnknown } from "../language/expressions.js";
import { resolveValue } from "../language/resolve.js";
import { lintResolved } from "../config/lint.js";
import { hasCall } from "../config/references.js";
import { fieldMask, plain, secretStrings } from "../language/sensitive.js";
import { formatPath } from "../yaml/source.js";
import type { IamInputs } from "../drivers/types.js";
import { validate } from "../schemas/index.js";
import { propertySchemaDiagnostic } from "../config/schema-diagnostics.js";
import type { PlanContext } from "./context.js";
import { conflictSummary } from "../claims/conflict-rule.js";
import { projectIdsIn } from "../cloud/names.js";
import { pushAll } from "../base/arrays.js";

export interface Desired {
  inputs: IamInputs;
  /** False when some input is known only during apply. */
  known: boolean;
}

/** The desired inputs, or undefined after reporting errors. */
export function desiredInputs(ctx: PlanContext, r: ResourceDecl): Desired | undefined {
  // The usual resource is all literals: nothing to resolve, no secret, no unknown; the stack
  // schema checked it at load (a forEach instance's values are substituted after that check).
  if (r.refs.length === 0 && writtenLiteral(r.properties))
    return knownInputs(ctx, r, r.properties, { checked: !r.each, literal: true });
  const errorsBefore = ctx.diags.length;
  const resolved = resolveValue(
    r.properties,
    ["resources", r.decl, "properties"],
    ctx.scope,
    ctx.stack.source,
    ctx.diags,
  );
  const mask = fieldMask(resolved);
  if (mask !== false) {
    ctx.masks.set(r.name, mask);
    secretStrings(resolved, ctx.secrets);
  }
  const raw = plain(resolved) as Record<string, unknown>;
  const desired = containsUnknown(raw)
    ? partlyKnownInputs(ctx, r, raw)
    : knownInputs(ctx, r, raw, { checked: false, literal: false });
  // Errors only: a lint warning on a resolved value does not stop the resource from planning.
  if (!desired || ctx.diags.slice(errorsBefore).some((d) => d.severity === "error")) return undefined;
  return desired;
}

/** Whether a value as written holds neither a `$` (an interpolation, or a `$$` to unescape) nor
 *  a function call: what resolving would return as is. */
function writtenLiteral(v: unknown): boolean {
  if (typeof v === "string") return !v.includes("$");
  if (Array.isArray(v)) return v.every(writtenLiteral);
  if (v && typeof v === "object") {
    const proto = Object.getPrototypeOf(v);
    if (proto !== null && proto !== Object.prototype) return false;
    for (const k in v) if (k.startsWith("fn::") || !writtenLiteral((v as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** `checked`: the stack schema already validated `raw`; `literal`: nothing in it was resolved. */
function knownInputs(
  ctx: PlanContext,
  r: ResourceDecl,
  raw: Record<string, unknown>,
  how: { checked: boolean; literal: boolean },
): Desired | undefined {
  const src = ctx.stack.source;
  const d = r.driver;
  const at = ["resources", r.decl, "properties"];
  const schemaErrors = how.checked ? [] : validate(d.inputsSchema, raw);
  for (const e of schemaErrors) ctx.diags.push(propertySchemaDiagnostic(src, r.name, r.decl, e));
  if (schemaErrors.length) return undefined;
  const n = loadTimeNormalized(ctx, r, raw) ?? d.normalize(raw, ctx.defaults);
  for (const p of n.problems) {
    const pos = src.position([...at, ...p.path]);
    ctx.diags.push(
      error(`${r.name}: ${p.message}`, {
        file: src.file,
        line: pos.line,
        column: pos.column,
        path: formatPath([...at, ...p.path]),
        address: r.name,
      }),
    );
  }
  if (n.problems.length) return undefined;
  // Values from `${…}` are linted now that they are known (literal ones were at load).
  // (Those known when the stack loaded were linted then: r.loadTimeProperties.)
  if (!how.literal && !r.loadTimeProperties && (r.refs.length || hasCall(r.properties)))
    pushAll(
      ctx.diags,
      lintResolved(ctx.stack, r, raw, {
        strict: ctx.opts.strict === true,
        now: (ctx.opts.now ?? (() => new Date()))(),
      }),
    );
  claim(ctx, r, n.inputs);
  return { inputs: n.inputs, known: true };
}

/** What the loader normalised `raw` to, when `raw` is the properties as written and the plan's
 *  defaults are those the loader had (no project numbers to replace by IDs). */
function loadTimeNormalized(ctx: PlanContext, r: ResourceDecl, raw: Record<string, unknown>) {
  const at = r.loadTimeInputs;
  const { defaults } = ctx;
  if (!at || raw !== r.properties || at.project !== defaults.project || at.location !== defaults.location) return;
  return projectIdsIn(defaults) ? undefined : { inputs: at.inputs, problems: [] };
}

/** Two resources of the stack may not manage the same grant. */
function claim(ctx: PlanContext, r: ResourceDecl, inputs: IamInputs): void {
  const claims = r.driver.claims(inputs);
  const c = ctx.owners.conflict(claims);
  if (!c) return ctx.owners.hold(claims, r.name);
  const other = c.owner;
  const summary =
    c.kind === "binding"
      ? `resources ${addressText(other)} and ${addressText(r.name)} manage the ` +
        `same binding (${inputs.role} on ${inputs.name})`
      : c.kind === "member"
        ? `resources ${addressText(other)} and ${addressText(r.name)} manage the same ` +
          `member (${inputs.member}, ${inputs.role} on ${inputs.name})`
        : conflictSummary(c, r.name, claims[0]!);
  const detail =
    `${addressText(other)} is declared at ${declaredAt(ctx.stack.source, other)}. Two resources of a ` +
    `stack may not manage the same grant: remove one, or move the grant into the resource that manages ` +
    `the whole binding or policy.`;
  ctx.diags.push(
    error(summary, {
      address: r.name,
      detail,
      file: ctx.stack.source.file,
      ...ctx.stack.source.position(["resources", r.decl], { key: true }),
    }),
  );
}

/** A resource whose identity (the inputs whose change replaces it: the object, role, condition,
 *  member) is known claims its grant now, though other values wait on apply. */
function partlyKnownInputs(ctx: PlanContext, r: ResourceDecl, raw: Record<string, unknown>): Desired {
  const inputs = partlyKnown(ctx, r, raw);
  if (!r.driver.replaceOn.some((f) => containsUnknown(raw[f]))) claim(ctx, r, inputs);
  return { inputs, known: false };
}

/** Known parts are normalised (so the name is complete); unknown parts stay unknown. */
function partlyKnown(ctx: PlanContext, r: ResourceDecl, raw: Record<string, unknown>): IamInputs {
  const partial = Object.fromEntries(Object.entries(raw).filter(([, v]) => !containsUnknown(v)));
  const n = r.driver.normalize(
    { name: "x", role: "roles/x", members: [], member: "user:x@x.x", ...partial },
    ctx.defaults,
  );
  const normalised = n.inputs as unknown as Record<string, unknown>;
  return { ...raw, ...Object.fromEntries(Object.keys(partial).map((k) => [k, normalised[k]])) } as unknown as IamInputs;
}
