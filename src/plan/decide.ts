// One resource's decision, for a resource the state already has: a pure function of what the
// stack wants, what the state recorded and what the refresh observed. No I/O: the reads it
// depends on are done before it is called.
import type { ResourceChange, StateResource } from "../generated/schemas.js";
import { UNKNOWN, isUnknown } from "../language/expressions.js";
import type { IamDriver, IamInputs } from "../drivers/types.js";
import { changedFields, sameInputs } from "./compare.js";
import { type ChangeBase, change, driftChange, noOpChange, plannedValue } from "./change-builders.js";
import type { Observed } from "./refresh.js";
import { extended } from "../base/extended.js";

export interface ExistingInput {
  base: ChangeBase;
  driver: IamDriver;
  desired: IamInputs;
  state: StateResource;
  observed: Observed;
  /** The stack's ignoreChanges for this resource. */
  ignoreChanges: readonly string[];
  /** --replace names this resource. */
  replaceRequested: boolean;
  /** The stack's protect option as written. */
  protect: boolean;
  /** Whether a grant with these inputs already exists live (a member adopts it). */
  liveHas: (inputs: IamInputs) => boolean;
}

export type Decision =
  | { kind: "change"; change: ResourceChange; drift?: ResourceChange; value: unknown }
  /** The object itself does not exist: apply could not succeed. */
  | { kind: "missing"; drift?: ResourceChange };

/** Keeps the observed value of the inputs the stack ignores. */
export function withIgnored(desired: IamInputs, live: IamInputs, ignore: readonly string[]): IamInputs {
  if (ignore.length === 0) return desired;
  const out = { ...desired } as unknown as Record<string, unknown>;
  for (const f of ignore) out[f] = (live as unknown as Record<string, unknown>)[f];
  return out as unknown as IamInputs;
}

export function decideExisting(i: ExistingInput): Decision {
  const { driver: d, observed: o, state } = i;
  const base: ChangeBase = state.adopted ? extended(i.base, { before_adopted: true }) : i.base;
  const priorInputs = state.inputs as unknown as IamInputs;
  const before = o.inputs ? (o.outputs ?? d.outputs(o.inputs, o.etag)) : null;
  const drift = !o.inputs || !sameInputs(d, priorInputs, o.inputs) ? driftChange(base, state, before) : undefined;
  if (o.missing && (isUnknown(i.desired.name) || i.desired.name === priorInputs.name))
    return withDrift({ kind: "missing" as const }, drift);
  if (!o.inputs) {
    const after = plannedValue(d, i.desired, UNKNOWN);
    const { before_adopted: _, ...gone } = base;
    return withDrift(
      {
        kind: "change" as const,
        change: { ...change(gone, "create", null, after), action_reason: "create_because_gone" as const },
        value: after,
      },
      drift,
    );
  }
  const target = withIgnored(i.desired, o.inputs, i.ignoreChanges);
  const fields = changedFields(d, o.inputs, target);
  const replaceFields = fields.length ? fields.filter((f) => d.replaceOn.includes(f)) : fields;
  if (replaceFields.length || i.replaceRequested)
    return withDrift(replacement(i, base, before, target, replaceFields), drift);
  const kept: ChangeBase = state.adopted ? extended(base, { after_adopted: true }) : base;
  if (fields.length) {
    const after = plannedValue(d, target, UNKNOWN);
    return withDrift({ kind: "change" as const, change: change(kept, "update", before, after), value: after }, drift);
  }
  // A new object: a copy of it (`{ ...c }`) would only be more garbage.
  const noOp = noOpChange(kept, before);
  const protectChanged = (state.protect === true) !== i.protect;
  return withDrift(
    {
      kind: "change" as const,
      change: protectChanged ? extended(noOp, { state_only: ["protect" as const] }) : noOp,
      value: before,
    },
    drift,
  );
}

/** `x` with the drift the refresh found, when it found some. */
function withDrift<T extends object>(x: T, drift: ResourceChange | undefined): T {
  return drift ? extended(x, { drift }) : x;
}

/** The decision to replace (a field that cannot be updated changed, or --replace). */
export function replacement(
  i: ExistingInput,
  base: ChangeBase,
  before: unknown,
  target: IamInputs,
  replaceFields: string[],
): Decision {
  const d = i.driver;
  const after = plannedValue(d, target, UNKNOWN);
  // A new grant that already exists live is adopted; a forced replacement keeps the adoption.
  const adopted = replaceFields.length ? i.liveHas(target) : i.state.adopted === true;
  const paths = (i.replaceRequested && !replaceFields.length ? d.replaceOn.slice(0, 1) : replaceFields).map((f) => [f]);
  return {
    kind: "change",
    change: {
      ...change(base, "replace", before, after, { replace_paths: paths }),
      action_reason: i.replaceRequested ? "replace_by_request" : "replace_because_cannot_update",
      ...(adopted ? { after_adopted: true } : {}),
    },
    value: after,
  };
}
