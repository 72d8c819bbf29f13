// The engine session's apply and save steps (./session.ts opens the stack and plans): apply a
// planned stack, saving the state as its steps complete (compare-and-swap on the version), save what
// settling an interrupted run's writes found, and save what a refresh found.
import type { Plan, State } from "../generated/schemas.js";
import { apply, type ApplyResult } from "../apply/executor.js";
import { sealPlan } from "../plan/saved-plan.js";
import { newState, versionOf, type WriteMeta } from "../state/index.js";
import type { GuardrailApproval } from "../state/store.js";
import { reservePlanClaims, reserveResourceClaims } from "./claims-check.js";
import { runDeferred } from "../sdk/deferred.js";
import { sharedSignal } from "./shared-signal.js";
import { type Emit, noEmit } from "../contracts/events.js";
import type { PlannedStack, StackSession } from "./session.js";

export interface ApplyRequest {
  parallelism: number;
  /** The owner-approval guardrails approved (--approve), recorded in a backend's history. */
  approvals?: GuardrailApproval[];
  emit?: Emit;
  signal?: AbortSignal;
}

/**
 * Applies a plan made by planStack, saving the state as steps complete. Each save expects the
 * version the previous one wrote (compare-and-swap): another writer's state is never overwritten.
 */
export async function applyPlan(session: StackSession, planned: PlannedStack, req: ApplyRequest): Promise<ApplyResult> {
  let expect = versionOf(planned.prior);
  const meta = writeMetaOf(planned.plan, req.approvals);
  // Again after approval, and recorded at once: another stack may have claimed the same grants
  // since the plan, or be applying them now.
  await reservePlanClaims(session.store, planned.real, planned.projectIds);
  const save = async (s: State) => {
    const written = await session.store.write(s, expect, meta);
    expect = versionOf(written);
    return written;
  };
  // What the settlement of an interrupted run's writes found is saved before any new write.
  const settled = await saveSettlement(session, planned, meta);
  if (settled) expect = versionOf(settled);
  const state = settled ?? planned.prior ?? newState(planned.real.stack.name);
  planned.cloud.route(req.emit ?? noEmit);
  const shared = req.signal ? sharedSignal(req.signal) : undefined;
  try {
    return await apply(planned.real, {
      cloud: planned.cloud.port,
      state,
      save,
      intents: session.store,
      // The digest of a sealed plan (one saved by `plan --out`, and so reviewed as a file): sealing a
      // plan again here would cost seconds at 100,000 resources.
      planDigest: () => planned.plan.digest,
      parallelism: req.parallelism,
      live: planned.live,
      claim: (claims) => reserveResourceClaims(session.store, claims, planned.projectIds),
      // A program's .apply functions on values known only during apply run in its thread.
      runDeferred,
      ...(req.emit ? { emit: req.emit } : {}),
      ...(shared ? { signal: shared.signal } : {}),
    });
  } finally {
    shared?.dispose();
  }
}

/** Saves what settling an interrupted run's writes found (./settle.ts), expecting the state it
 *  was settled from, and clears the intents it settled; returns the state written, if any. Apply
 *  does it before its first write, and an apply with nothing to change does it too. */
export async function saveSettlement(
  session: StackSession,
  planned: PlannedStack,
  meta: WriteMeta = writeMetaOf(planned.plan),
): Promise<State | undefined> {
  const s = planned.settlement;
  if (!s) return undefined;
  const written = s.changed && planned.prior ? await session.store.write(planned.prior, s.from, meta) : undefined;
  await session.store.clearIntents(s.settled);
  return written;
}

/** What a backend with history records of an apply: the plan's digest and access summary. */
function writeMetaOf(plan: Plan, approvals?: GuardrailApproval[]): WriteMeta {
  const changes = plan.access_changes?.changes ?? [];
  let digest = plan.digest;
  return {
    // Computed when a backend records it: sealing a large plan takes seconds, and the local file never does.
    get planDigest() {
      return (digest ??= sealPlan(plan, undefined).digest!);
    },
    access: {
      granted: changes.filter((c) => c.action === "grant").length,
      revoked: changes.filter((c) => c.action === "revoke").length,
    },
    ...(approvals?.length ? { approvals } : {}),
  };
}

/** `refresh`: the prior state with its resources as the plan's refresh found them; undefined
 *  when there is no state yet. */
export async function saveRefreshed(session: StackSession, planned: PlannedStack): Promise<State | undefined> {
  if (!planned.prior) return undefined;
  const written = await session.store.write(
    { ...planned.prior, resources: planned.refreshed },
    versionOf(planned.prior),
  );
  await session.store.clearIntents(planned.settlement?.settled ?? []);
  return written;
}
