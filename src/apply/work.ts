// What one node of the change graph does when its turn comes: a deferred data-source read, or
// the policy work of a resource (its modifications on one or two policies, and what to record in
// the state once they are written). Revokes leave adopted grants and grants other resources of
// the plan hold.
import type { LimitFunction } from "p-limit";
import type { IntentChange, Policy, ResourceChange, StateResource } from "../generated/schemas.js";
import { functionDriver, resourceDriver } from "../drivers/registry.js";
import type { IamDriver, IamInputs } from "../drivers/types.js";
import { inputsOf } from "../drivers/inputs.js";
import { type Diagnostic, UserError } from "../diagnostics/diagnostic.js";
import type { ResourceClaim } from "../claims/claims.js";
import { containsUnknown, stripUnknown } from "../language/expressions.js";
import { resolveValue, type Scope } from "../language/resolve.js";
import type { NameDefaults } from "../cloud/names.js";
import type { PolicyModification } from "../iam/policy.js";
import type { CloudPort, PolicyKind } from "../contracts/cloud-port.js";
import type { Emit } from "../contracts/events.js";
import type { HeldGrants } from "../plan/ownership.js";
import type { Node } from "./graph.js";
import type { StateRecorder } from "./state-recorder.js";

/** One unit of policy work: a change's modifications on one policy. */
export interface Work {
  node: Node;
  kind: PolicyKind;
  policy: string;
  mods: PolicyModification[];
  /** After this work: what to record */
  finish: (p: Policy | undefined) => void;
  /** What its write's intent records (./intents.ts): its modifications, and what the state
   *  records if the write lands. */
  intent: IntentChange;
}

export interface WorkContext {
  cloud: CloudPort;
  limit: LimitFunction;
  emit: Emit;
  scope: Scope;
  values: Map<string, unknown>;
  defaults: NameDefaults;
  held: HeldGrants;
  recorder: StateRecorder;
  fail: (n: Node, summary: string, detail?: string) => void;
  /** See ApplyContext.claim. */
  claim?: (claims: ResourceClaim[]) => Promise<void>;
  /** The second write of a replacement onto another object is done and the resource recorded:
   *  the intent of its first write (the grant) is covered only now. */
  movedRecorded?: (n: Node) => void;
}

type Obj = Record<string, unknown>;
const diagsText = (diags: Diagnostic[]) => diags.map((d) => d.summary).join("; ");

/** Prepares a node: resolves deferred values and returns its policy work (or finishes it). */
export async function prepareNode(w: WorkContext, n: Node, started: number): Promise<Work[]> {
  if (n.change.mode === "data") {
    await readDataSource(w, n, started);
    return [];
  }
  const d = resourceDriver(n.change.type);
  if (!d) {
    w.fail(n, `unknown type ${n.change.type}`);
    return [];
  }
  const desired = desiredNow(w, n, d);
  if (desired === false) return [];
  if (desired && n.change.config && !(await claimedNow(w, n, d, desired))) return [];
  return resourceWork(w, n, d, desired);
}

/** What a resource known only now claims, recorded before its write; false (the node failed)
 *  when another stack or workspace claims it. */
async function claimedNow(w: WorkContext, n: Node, d: IamDriver, desired: IamInputs): Promise<boolean> {
  if (!w.claim) return true;
  try {
    await w.claim(d.claims(desired).map((claim) => ({ address: n.change.address, claim })));
    return true;
  } catch (e) {
    const first = e instanceof UserError ? e.diagnostics[0] : undefined;
    w.fail(n, first?.summary ?? (e as Error).message, first?.detail);
    return false;
  }
}

async function readDataSource(w: WorkContext, n: Node, started: number): Promise<void> {
  const c = n.change;
  const cfg = (c.config ?? {}) as { function?: string; arguments?: unknown };
  const fn = functionDriver(String(cfg.function ?? c.type));
  const diags: Diagnostic[] = [];
  const args = resolveValue(
    cfg.arguments,
    ["variables", c.address, "fn::invoke", "arguments"],
    w.scope,
    undefined,
    diags,
  ) as Obj;
  if (!fn || diags.length || containsUnknown(args))
    return w.fail(
      n,
      "cannot evaluate the function arguments",
      diagsText(diags) || "a value it depends on is still unknown",
    );
  const named = fn.objectName(args, w.defaults);
  if ("problem" in named) return w.fail(n, named.problem.message);
  w.emit({ type: "read", address: c.address, token: fn.token, object: named.name, phase: "start" });
  try {
    const res = await w.limit(() => fn.read(w.cloud, named.name));
    w.values.set(c.address, res);
    w.emit({
      type: "read",
      address: c.address,
      token: fn.token,
      object: named.name,
      phase: "done",
      ms: Date.now() - started,
    });
    n.status = "done";
  } catch (e) {
    w.fail(n, `cannot read ${named.name}`, (e as Error).message);
  }
}

/** The desired inputs: from the plan, or resolved now for values known only during apply.
 *  undefined for a delete; false when they cannot be evaluated (the node has failed). */
function desiredNow(w: WorkContext, n: Node, d: IamDriver): IamInputs | undefined | false {
  const c = n.change;
  if (!c.config || n.action === "delete") return c.change.after ? inputsOf(d, c.change.after) : undefined;
  const diags: Diagnostic[] = [];
  const raw = resolveValue(
    (c.config as Obj).properties,
    ["resources", c.address, "properties"],
    w.scope,
    undefined,
    diags,
  ) as Obj;
  if (diags.length || containsUnknown(raw)) {
    w.fail(n, "cannot evaluate its properties", diagsText(diags) || "a value it depends on is still unknown");
    return false;
  }
  const norm = d.normalize(raw, w.defaults);
  if (norm.problems.length) {
    w.fail(n, norm.problems.map((p) => p.message).join("; "));
    return false;
  }
  w.held.hold(d.claims(norm.inputs));
  return norm.inputs;
}

/** What the state records for the resource after its write (`etag`: the policy's then). Adopted
 *  only when the reviewed plan said so: a grant found live before the plan was made. Nothing read
 *  during apply makes a grant adopted (a grant found there on a re-read after a lost answer is
 *  this apply's own write). */
function entryOf(c: ResourceChange, d: IamDriver, inputs: IamInputs, etag: string): StateResource {
  return {
    address: c.address,
    type: c.type,
    id: d.id(inputs),
    inputs: stripUnknown(inputs) as Obj,
    outputs: d.outputs(inputs, etag),
    dependencies: c.dependencies ?? [],
    ...(c.protect ? { protect: true } : {}),
    ...(c.retain_on_delete ? { retainOnDelete: true } : {}),
    ...(c.change.after_sensitive && typeof c.change.after_sensitive === "object"
      ? { sensitive: c.change.after_sensitive as Record<string, true> }
      : {}),
    ...(c.after_adopted === true ? { adopted: true } : {}),
  };
}

function resourceWork(w: WorkContext, n: Node, d: IamDriver, desired: IamInputs | undefined): Work[] {
  const c = n.change;
  const prior = c.change.before ? inputsOf(d, c.change.before) : undefined;
  const record = (inputs: IamInputs, p: Policy | undefined) => w.recorder.set(entryOf(c, d, inputs, p?.etag ?? ""));
  const intent = (mods: PolicyModification[], then: Omit<IntentChange, "address" | "type" | "mods">): IntentChange => ({
    address: c.address,
    type: c.type,
    mods: mods as unknown as IntentChange["mods"],
    ...then,
  });
  // What revoking the prior grant takes away: nothing of a grant converge adopted (it was there
  // before converge), nothing another resource of this plan holds.
  const revoke = (from: IamInputs) =>
    c.before_adopted ? [] : w.held.guard(d.kind, from.name, d.modifications(from, undefined));
  if (n.action === "no-op" || (n.action === "import" && c.change.action === "no-op")) {
    if (desired) record(desired, { etag: String(((c.change.before ?? {}) as Obj).etag ?? "") });
    n.status = "done";
    return [];
  }
  if (n.action === "delete") {
    // retainOnDelete: the delete forgets the resource; its grant stays.
    const mods = c.retain_on_delete ? [] : revoke(prior!);
    const forget = () => {
      w.recorder.remove(c.address, c.type);
    };
    if (mods.length)
      return [
        { node: n, kind: d.kind, policy: prior!.name, mods, finish: forget, intent: intent(mods, { forget: true }) },
      ];
    // Adopted, or other resources of this plan hold every grant it had: forget it, revoke nothing.
    forget();
    n.status = "done";
    return [];
  }
  const target = desired!;
  if (prior && n.action === "replace" && prior.name !== target.name) {
    // Different objects: grant on the new one first, then revoke on the old one. The state keeps
    // the old grant until its revoke is done: if apply stops in between (Ctrl-C, a kill, a
    // refused revoke), the next plan sees the old grant and replaces again; recording the new
    // one first would forget a grant that is still live.
    let granted: Policy | undefined;
    const entry = entryOf(c, d, target, "");
    const grant = d.modifications(undefined, target);
    const revoked = revoke(prior);
    return [
      {
        node: n,
        kind: d.kind,
        policy: target.name,
        mods: grant,
        finish: (p) => void (granted = p),
        intent: intent(grant, { record: entry, first_of_two: true }),
      },
      {
        node: n,
        kind: d.kind,
        policy: prior.name,
        mods: revoked,
        finish: () => (record(target, granted), w.movedRecorded?.(n)),
        intent: intent(revoked, { record: entry }),
      },
    ];
  }
  // A replacement on one object revokes the old grant and makes the new one in one write.
  const grant = d.modifications(n.action === "create" || n.action === "replace" ? undefined : prior, target);
  const mods =
    n.action === "replace" && prior ? [...revoke(prior), ...grant] : w.held.guard(d.kind, target.name, grant);
  return [
    {
      node: n,
      kind: d.kind,
      policy: target.name,
      mods,
      finish: (p) => record(target, p),
      intent: intent(mods, { record: entryOf(c, d, target, "") }),
    },
  ];
}
