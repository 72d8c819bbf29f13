// Planning one managed resource: its desired inputs, then the decision for a resource the state
// has (decide.ts), an import (options.import), or a create. Reads come from the refresh, which
// started them early; the decisions themselves are pure.
import type { ResourceDecl } from "../config/model.js";
import { splitAddress } from "../language/addresses.js";
import { kindLabel } from "../gcp/object-kinds.js";
import { error } from "../diagnostics/diagnostic.js";
import { UNKNOWN, containsUnknown, isUnknown } from "../language/expressions.js";
import { resourceDriver } from "../drivers/registry.js";
import type { IamDriver, IamInputs } from "../drivers/types.js";
import type { PlanContext } from "./context.js";
import { type ChangeBase, change, deleteChange, plannedValue } from "./change-builders.js";
import { decideExisting, withIgnored } from "./decide.js";
import { changedFields } from "./compare.js";
import { type Desired, desiredInputs } from "./desired.js";
import type { Observed, Read } from "./refresh.js";
import type { Policy, StateResource } from "../generated/schemas.js";
import { extended } from "../base/extended.js";
import { refuseReplace } from "./protect.js";
import { memberKey } from "../iam/members.js";

/** Plans `r`; without a promise when nothing has to be waited for (its policy already read). */
export function planResource(ctx: PlanContext, r: ResourceDecl): void | Promise<void> {
  ctx.declared.add(r.name);
  const desired = desiredInputs(ctx, r);
  if (!desired) return void ctx.values.set(r.name, UNKNOWN);
  const base = changeBase(ctx, r, desired);
  const state = ctx.priorByAddress.get(r.name);
  if (state && state.type === r.type && resourceDriver(state.type))
    return planExisting(ctx, r, state, desired.inputs, base);
  // Same address, another type: destroy the old one (after the new one exists).
  if (state && r.options.protect) {
    refuseReplace(ctx, r, "type");
    return void ctx.values.set(r.name, UNKNOWN);
  }
  if (state) ctx.changes.push(deleteChange(state, "replace_because_cannot_update"));
  if (r.options.import !== undefined && !state) return planImport(ctx, r, desired.inputs, base);
  return planCreate(ctx, r, desired.inputs, base);
}

/** The keys in the order the plan writes them, each optional one set only when it applies (an
 *  object literal spreading `{}`s makes V8 add keys to a spread copy: slow, see ../base/extended.ts). */
function changeBase(ctx: PlanContext, r: ResourceDecl, desired: Desired): ChangeBase {
  const base: ChangeBase = {
    address: r.name,
    mode: "managed",
    type: r.type,
    name: r.name,
    dependencies: ctx.stack.graph.dependencies(r.name),
  };
  if (ctx.previous.has(r.name)) base.previous_address = ctx.previous.get(r.name)!;
  if (r.options.protect) base.protect = true;
  if (r.options.retainOnDelete) base.retain_on_delete = true;
  if (!isUnknown(desired.inputs.name)) base.policy = desired.inputs.name;
  if (!desired.known) base.config = { properties: r.properties };
  return base;
}

/** A plan fails where apply would: a grant on an object that does not exist cannot be made. */
function objectMissing(ctx: PlanContext, address: string, d: IamDriver, name: string): void {
  const src = ctx.stack.source;
  ctx.diags.push(
    error(`${address}: ${kindLabel(d.kind)} ${name} does not exist`, {
      address,
      file: src.file,
      ...src.position(["resources", splitAddress(address).name, "properties", "name"]),
      detail: "Create it first, or correct the name. Nothing was changed.",
    }),
  );
  ctx.values.set(address, UNKNOWN);
}

/** Whether a member's grant already exists live, from reads already made, granted outside
 *  converge: not a grant a resource of the prior state holds that converge did not adopt (one
 *  moving to this resource in this apply stays converge's own). A binding is authoritative (it
 *  owns whatever its role holds), so it adopts nothing. */
function liveHas(ctx: PlanContext, d: IamDriver): (inputs: IamInputs) => boolean {
  return (inputs) => {
    if (d.ownership !== "member" || !ctx.opts.refresh || containsUnknown(inputs)) return false;
    const read = ctx.refresh.settled(d.kind, inputs.name);
    return (
      read !== undefined &&
      read.ok &&
      read.value !== undefined &&
      d.observe(inputs, read.value) !== undefined &&
      !ctx.ownGrants.holds(d, inputs)
    );
  };
}

/** The read of the object a member would be granted on (for adoption), when it is still to come. */
function readForAdoption(ctx: PlanContext, d: IamDriver, inputs: IamInputs): Promise<unknown> | undefined {
  if (
    d.ownership !== "member" ||
    !ctx.opts.refresh ||
    isUnknown(inputs.name) ||
    ctx.refresh.settled(d.kind, inputs.name)
  )
    return undefined;
  return ctx.refresh.read(d.kind, inputs.name);
}

function planExisting(
  ctx: PlanContext,
  r: ResourceDecl,
  state: StateResource,
  desired: IamInputs,
  base: ChangeBase,
): void | Promise<void> {
  const observed = ctx.refresh.observe(state, r.driver);
  if (observed instanceof Promise) return observed.then((o) => planObserved(ctx, r, state, desired, base, o));
  return planObserved(ctx, r, state, desired, base, observed);
}

function planObserved(
  ctx: PlanContext,
  r: ResourceDecl,
  state: StateResource,
  desired: IamInputs,
  base: ChangeBase,
  observed: Observed | undefined,
): void | Promise<void> {
  if (!observed) return void ctx.values.set(r.name, UNKNOWN);
  const adoption = readForAdoption(ctx, r.driver, desired);
  if (adoption) return adoption.then(() => decideAndRecord(ctx, r, state, desired, base, observed));
  decideAndRecord(ctx, r, state, desired, base, observed);
}

function decideAndRecord(
  ctx: PlanContext,
  r: ResourceDecl,
  state: StateResource,
  desired: IamInputs,
  base: ChangeBase,
  observed: Observed,
): void {
  const decision = decideExisting({
    base,
    driver: r.driver,
    desired,
    state,
    observed,
    ignoreChanges: r.options.ignoreChanges,
    replaceRequested: ctx.opts.replace.includes(r.name),
    protect: r.options.protect === true,
    liveHas: liveHas(ctx, r.driver),
  });
  if (decision.drift) ctx.drift.push(decision.drift);
  if (decision.kind === "missing") return objectMissing(ctx, r.name, r.driver, String(state.inputs.name));
  // A replacement destroys the old grant: protect refuses it as it refuses a destroy.
  if (
    r.options.protect &&
    (decision.change.change.action === "replace" || decision.change.change.action === "delete")
  ) {
    refuseReplace(ctx, r, decision.change);
    return void ctx.values.set(r.name, UNKNOWN);
  }
  ctx.changes.push(decision.change);
  ctx.values.set(r.name, decision.value);
}

async function planImport(ctx: PlanContext, r: ResourceDecl, desired: IamInputs, base: ChangeBase): Promise<void> {
  const d = r.driver;
  const src = ctx.stack.source;
  const importId = r.options.import!;
  const at = { address: r.name, file: src.file, ...src.position(["resources", r.decl, "options", "import"]) };
  const target = d.parseImportId(importId, ctx.defaults);
  if (typeof target === "string") {
    ctx.diags.push(error(`${r.name}: ${target}`, { address: r.name }));
    return void ctx.values.set(r.name, UNKNOWN);
  }
  const read = await ctx.refresh.read(d.kind, target.name);
  if (!read.ok) {
    ctx.refresh.failed(r.name, target.name, read.error);
    return void ctx.values.set(r.name, UNKNOWN);
  }
  const adopted = read.value ? d.adopt(target, read.value) : `${target.name} does not exist`;
  if (typeof adopted === "string") {
    ctx.diags.push(error(`${r.name}: cannot import "${importId}": ${adopted}`, at));
    return void ctx.values.set(r.name, UNKNOWN);
  }
  const before = d.outputs(adopted, read.value?.etag ?? "");
  const wanted = withIgnored(desired, adopted, r.options.ignoreChanges);
  const fields = changedFields(d, adopted, wanted);
  const mismatch = fields.filter((f) => d.replaceOn.includes(f));
  if (mismatch.length) {
    ctx.diags.push(
      error(
        `${r.name}: import ID "${importId}" designates a different grant than ` +
          `the configuration (${mismatch.join(", ")} differ)`,
        at,
      ),
    );
    return void ctx.values.set(r.name, UNKNOWN);
  }
  const after = fields.length ? plannedValue(d, wanted, UNKNOWN) : before;
  ctx.changes.push(change(base, fields.length ? "update" : "no-op", before, after, { importing: { id: importId } }));
  ctx.values.set(r.name, after);
}

function planCreate(ctx: PlanContext, r: ResourceDecl, desired: IamInputs, base: ChangeBase): void | Promise<void> {
  const d = r.driver;
  // The policy was read in advance; a create must not hide that it cannot be read or written.
  if (!ctx.opts.refresh || isUnknown(desired.name)) return created(ctx, r, desired, base);
  const settled = ctx.refresh.settled(d.kind, desired.name);
  if (settled) return createRead(ctx, r, desired, base, settled);
  return ctx.refresh.read(d.kind, desired.name).then((read) => createRead(ctx, r, desired, base, read));
}

function createRead(
  ctx: PlanContext,
  r: ResourceDecl,
  desired: IamInputs,
  base: ChangeBase,
  read: Read<Policy | undefined>,
): void {
  if (!read.ok) {
    ctx.refresh.failed(r.name, desired.name, read.error);
    return void ctx.values.set(r.name, UNKNOWN);
  }
  if (!read.value) return objectMissing(ctx, r.name, r.driver, desired.name);
  created(ctx, r, desired, base);
}

function created(ctx: PlanContext, r: ResourceDecl, desired: IamInputs, base: ChangeBase): void {
  const d = r.driver;
  const after = plannedValue(d, desired, UNKNOWN);
  const created = change(base, "create", null, after);
  const takenOver = takenOverMembers(ctx, d, desired);
  ctx.changes.push(
    liveHas(ctx, d)(desired)
      ? extended(created, { after_adopted: true })
      : takenOver.length
        ? extended(created, { after_taken_over: takenOver })
        : created,
  );
  ctx.values.set(r.name, after);
}

/** The members a binding about to be created finds on its role already (granted outside
 *  converge): it keeps them, as its own, so destroying it revokes them. The review says so. */
function takenOverMembers(ctx: PlanContext, d: IamDriver, desired: IamInputs): string[] {
  if (d.ownership !== "binding" || !ctx.opts.refresh || containsUnknown(desired)) return [];
  const read = ctx.refresh.settled(d.kind, desired.name);
  if (!read?.ok || !read.value) return [];
  const live = d.observe(desired, read.value)?.members ?? [];
  const wanted = new Set((desired.members ?? []).map(memberKey));
  return live.filter((m) => wanted.has(memberKey(m)));
}
