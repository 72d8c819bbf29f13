// What the apply unit tests share: a recording CloudPort of plain functions over an in-memory
// world, a fake save, and plans from the real planner (so the executor runs on the plans it
// really receives).
import { expect } from "vitest";
import { apply, type ApplyContext, type ApplyResult } from "../../src/apply/executor.js";
import type { CloudPort, PolicyKind } from "../../src/contracts/cloud-port.js";
import type { Emit } from "../../src/contracts/events.js";
import { ChangeTally, type ChangeCounts } from "../../src/engine/tally.js";
import type { Plan, Policy, State } from "../../src/generated/schemas.js";
import { applyModifications, type PolicyModification } from "../../src/iam/policy.js";
import { plan } from "../../src/plan/planner.js";
import { BINDING, MEMBER, fakeCloud, planOptions, stackOf } from "../fixtures/builders.js";

export const HEAD = `name: t
provider:
  project: my-project
  location: us-central1
resources:
`;
export const binding = (address: string, name: string, role: string, members: string[], extra = "") =>
  `  ${address}:\n    type: ${BINDING}\n    properties:\n      name: ${name}\n      role: ` +
  `${role}\n      members: [${members.join(", ")}]\n${extra}`;
export const member = (address: string, name: string, role: string, m: string, extra = "") =>
  `  ${address}:\n    type: ${MEMBER}\n    properties:\n      name: ${name}` +
  `\n      role: ${role}\n      member: ${m}\n${extra}`;
export const dependsOn = (...a: string[]) => `    options:\n      dependsOn: [${a.join(", ")}]\n`;

export const empty = (etag: string): Policy => ({ version: 1, bindings: [], etag });

export interface Call {
  kind: PolicyKind;
  name: string;
  mods: PolicyModification[];
  initial: Policy | undefined;
}

/** A recording CloudPort over an in-memory world. */
export function recordingCloud(
  world: Record<string, Policy>,
  o: { fail?: (name: string, mods: PolicyModification[]) => Error | undefined; during?: (c: Call) => void } = {},
) {
  const calls: Call[] = [];
  const events: string[] = [];
  const reads: string[] = [];
  let etag = 100;
  const port: CloudPort = {
    getIamPolicy: async (_kind, name) => {
      reads.push(name);
      return world[name] ? structuredClone(world[name]) : undefined;
    },
    getFederation: async (name) => {
      throw Object.assign(new Error(`no federation ${name}`), { status: "NOT_FOUND" });
    },
    modifyPolicy: async (kind, name, mods, initial) => {
      const call: Call = { kind, name, mods: structuredClone(mods), initial: initial && structuredClone(initial) };
      calls.push(call);
      events.push(`start ${name}`);
      o.during?.(call);
      await new Promise((r) => setTimeout(r, 5));
      const err = o.fail?.(name, mods);
      if (err) {
        events.push(`fail ${name}`);
        throw err;
      }
      const current = world[name];
      if (!current) {
        events.push(`fail ${name}`);
        throw Object.assign(new Error(`Resource '${name}' was not found.`), { status: "NOT_FOUND" });
      }
      const { policy } = applyModifications(current, mods);
      policy.etag = `etag-${++etag}`;
      world[name] = policy;
      events.push(`end ${name}`);
      return { policy: structuredClone(policy), written: true, attempts: 1 };
    },
  };
  return { port, calls, events, reads, world };
}

/** A fake save that bumps the serial like the real store (previous serial + 1). */
export function fakeSave(start: number) {
  const saves: State[] = [];
  let serial = start;
  const save = async (s: State): Promise<State> => {
    await new Promise((r) => setTimeout(r, 1));
    const written = { ...structuredClone(s), serial: ++serial };
    saves.push(written);
    return written;
  };
  return { save, saves };
}

export const newState = (): State => ({
  version: 1,
  lineage: "11111111-2222-4333-8444-555555555555",
  serial: 0,
  stack: "t",
  resources: [],
  outputs: {},
});

export async function planFor(
  stackText: string,
  prior: State | undefined,
  world: Record<string, Policy>,
  destroy = false,
): Promise<{ p: Plan; live: Map<string, Policy> }> {
  const r = await plan(
    stackOf(stackText),
    prior,
    fakeCloud({ policies: structuredClone(world) }).port,
    planOptions({ destroy }),
  );
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return { p: r.plan, live: r.live };
}

/** Applies `p`; `counts` come from the engine's change tally, subscribed to the apply's events. */
export async function run(
  p: Plan,
  cloud: CloudPort,
  prior: State,
  extra: Partial<ApplyContext> = {},
): Promise<{ result: ApplyResult & { counts: ChangeCounts }; saves: State[] }> {
  const { save, saves } = fakeSave(prior.serial);
  const tally = new ChangeTally(p);
  const emit: Emit = (e) => {
    tally.onEvent(e);
    extra.emit?.(e);
  };
  const result = await apply(p, { cloud, state: prior, save, parallelism: 4, ...extra, emit });
  return { result: { ...result, counts: tally.counts }, saves };
}

export const addresses = (s: State) => s.resources.map((r) => r.address).sort();

/** A `fail` hook refusing every write to `denied` with PERMISSION_DENIED. */
export const deniedOn = (denied: string) => (name: string) =>
  name === denied
    ? Object.assign(new Error("The caller does not have permission"), { status: "PERMISSION_DENIED" })
    : undefined;

/** A `fail` hook rejecting as INVALID_ARGUMENT every write that sets a binding with `member`. */
export const rejecting = (member: string) => (_: string, mods: PolicyModification[]) =>
  mods.some((m) => m.kind === "setBinding" && m.members.includes(member))
    ? Object.assign(new Error("bad member"), { status: "INVALID_ARGUMENT" })
    : undefined;
