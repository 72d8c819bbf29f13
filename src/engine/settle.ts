// Settling the writes an interrupted run left pending (../apply/intents.ts). Each pending intent
// is checked against its policy as it is now, read once per policy: a resource's edits found there
// landed, and the state records what the write would have recorded (a grant it added is
// converge's own, adopted only when the reviewed plan said so); a delete found done is forgotten.
// Edits not there did not land (or were undone since): nothing is recorded. The grant half of a
// replacement onto another object that landed is converge's own until the resource records it:
// its intent stays pending, and the plan treats the grant as converge's (never adopted).
import type { IntentChange, Policy, State, StateResource, WriteIntent } from "../generated/schemas.js";
import { UserError, error, warning, type Diagnostic } from "../diagnostics/diagnostic.js";
import { listed } from "../diagnostics/listed.js";
import { resourceDriver } from "../drivers/registry.js";
import type { IamInputs } from "../drivers/types.js";
import { applyModifications, type PolicyModification } from "../iam/policy.js";
import { OwnGrants } from "../plan/ownership.js";
import { newState } from "../state/format.js";
import { type StateVersion, versionOf } from "../state/store.js";
import type { CloudPort, PolicyKind } from "../contracts/cloud-port.js";

export interface Settlement {
  /** The prior state with what landed recorded (undefined: there was none and nothing landed). */
  state: State | undefined;
  /** Whether `state` differs from the prior state (it must be saved before the next write). */
  changed: boolean;
  /** The version of the state it was settled from (undefined: there was none): its save expects it. */
  from: StateVersion | undefined;
  /** Grants converge wrote that no resource of `state` records yet (the first half of a move). */
  own: StateResource[];
  /** The intents settled: cleared once `state` is saved. */
  settled: string[];
  /** What the plan says of it. */
  diagnostic: Diagnostic | undefined;
  /** The policies it read ("{kind} {name}"; undefined: no such object): the plan starts from these
   *  same copies, so a write the interrupted run sent that lands later is never taken for someone
   *  else's grant (it makes apply's own write meet a conflict, and its re-read finds it there). */
  reads: ReadonlyMap<string, Policy | undefined>;
}

export const NOTHING_PENDING: Settlement = {
  state: undefined,
  changed: false,
  from: undefined,
  own: [],
  settled: [],
  diagnostic: undefined,
  reads: new Map(),
};

/** Settles `pending` against the live policies (read once each); `prior` is not changed. */
export async function settleIntents(
  pending: readonly WriteIntent[],
  prior: State | undefined,
  stackName: string,
  cloud: CloudPort,
  now: () => Date = () => new Date(),
  signal?: AbortSignal,
): Promise<Settlement> {
  if (!pending.length) return { ...NOTHING_PENDING, state: prior };
  const live = await readPolicies(pending, cloud, signal);
  const state: State = prior ? { ...structuredClone(prior) } : newState(stackName);
  const index = new Map(state.resources.map((r, i) => [r.address, i]));
  const recorded = new Set<string>();
  const forgotten = new Set<string>();
  const moving: { id: string; record: StateResource }[] = [];
  let landedWrites = 0;
  for (const intent of pending) {
    const policy = live.get(keyOf(intent));
    let landed = false;
    for (const c of intent.changes) {
      if (!changeLanded(c, policy)) continue;
      landed = true;
      if (c.forget) {
        const i = index.get(c.address);
        if (i !== undefined && state.resources[i]?.type === c.type) {
          state.resources[i] = undefined as unknown as StateResource;
          index.delete(c.address);
          forgotten.add(c.address);
          recorded.delete(c.address);
        }
      } else if (c.record && c.first_of_two) moving.push({ id: intent.id, record: c.record });
      else if (c.record) {
        const entry = withEtag(c.record, policy?.etag ?? "");
        const i = index.get(c.address);
        if (i !== undefined) state.resources[i] = entry;
        else index.set(c.address, state.resources.push(entry) - 1);
        recorded.add(c.address);
        forgotten.delete(c.address);
      }
    }
    if (landed) landedWrites++;
  }
  state.resources = state.resources.filter((r) => r !== undefined);
  const summary = {
    at: now().toISOString(),
    intents: pending.length,
    landed: landedWrites,
    recorded: [...recorded].sort(),
    forgotten: [...forgotten].sort(),
  };
  // The state says when it was settled (`state show`), unless there is none and nothing landed.
  const kept = prior !== undefined || recorded.size > 0 || forgotten.size > 0;
  if (kept) state.settled = summary;
  const moved = own(moving, state);
  const pendingStill = new Set(moved.map((m) => m.id));
  return {
    state: kept ? state : undefined,
    changed: kept,
    from: versionOf(prior),
    own: moved.map((m) => m.record),
    settled: pending.filter((i) => !pendingStill.has(i.id)).map((i) => i.id),
    diagnostic: settledDiagnostic(summary, moved.length),
    reads: live,
  };
}

/** The grants of moves that landed and that no resource of `state` records yet: they stay pending
 *  (converge's own) until one does. */
function own(moving: { id: string; record: StateResource }[], state: State): { id: string; record: StateResource }[] {
  if (!moving.length) return [];
  const holds = new OwnGrants(state.resources);
  return moving.filter((m) => !holdsRecord(holds, m.record));
}

const keyOf = (i: WriteIntent) => `${i.kind} ${i.policy}`;

/** Reads each policy the intents write, once; undefined for an object that no longer exists. */
async function readPolicies(
  pending: readonly WriteIntent[],
  cloud: CloudPort,
  signal?: AbortSignal,
): Promise<Map<string, Policy | undefined>> {
  const out = new Map<string, Policy | undefined>();
  const reads = new Map<string, WriteIntent>();
  for (const i of pending) if (!reads.has(keyOf(i))) reads.set(keyOf(i), i);
  await Promise.all(
    [...reads].map(async ([key, i]) => {
      try {
        out.set(key, await cloud.getIamPolicy(i.kind as PolicyKind, i.policy, signal));
      } catch (e) {
        throw new UserError(
          error(`cannot settle the writes an interrupted run left pending: cannot read the IAM policy of ${i.policy}`, {
            code: "state/pending-writes",
            detail:
              `${(e as Error).message}\nconverge records each write before it starts; whether this one ` +
              `landed decides which grants are converge's own. Nothing was changed: run the command again ` +
              `once the policy can be read.`,
          }),
        );
      }
    }),
  );
  return out;
}

/** Whether the resource's part of the write is there: its edits change nothing on the live
 *  policy (a delete on an object that is gone is done; a grant on one is not there). */
function changeLanded(c: IntentChange, policy: Policy | undefined): boolean {
  const mods = c.mods as unknown as PolicyModification[];
  if (!policy) return c.forget === true;
  return !applyModifications(policy, mods).changed;
}

function withEtag(record: StateResource, etag: string): StateResource {
  const d = resourceDriver(record.type);
  return d ? { ...record, outputs: d.outputs(record.inputs as unknown as IamInputs, etag) } : record;
}

function holdsRecord(holds: OwnGrants, record: StateResource): boolean {
  const d = resourceDriver(record.type);
  return d !== undefined && holds.holds(d, record.inputs as unknown as IamInputs);
}

function settledDiagnostic(
  s: { intents: number; landed: number; recorded: string[]; forgotten: string[] },
  moving: number,
): Diagnostic {
  const parts = [
    s.recorded.length ? `recorded as converge's own: ${listed(s.recorded, 10)}` : "",
    s.forgotten.length ? `deleted: ${listed(s.forgotten, 10)}` : "",
    moving
      ? `${moving} grant${moving === 1 ? "" : "s"} of a move to another object, converge's own until the move completes`
      : "",
  ].filter(Boolean);
  const writes = (n: number) => `${n} write${n === 1 ? "" : "s"}`;
  return warning(
    `Settled ${writes(s.intents)} an interrupted run left pending: ${s.landed} landed, ${s.intents - s.landed} did not`,
    {
      code: "state/settled-writes",
      detail:
        `${parts.length ? `${parts.join("; ")}. ` : ""}converge records each write before it starts (a ` +
        `crash, a kill or a lost answer cannot make its own grants look like someone else's); these were ` +
        `checked against the live policies.`,
    },
  );
}
