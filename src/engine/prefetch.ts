// Policy reads started ahead of planning (issue 20, item 2). As soon as the state has been read
// (a corrupt state is bad input: nothing may be sent before it is known to be good), the session
// starts the reads the planner's refresh would start first anyway (../plan/refresh.ts,
// readAheadPolicies): the state's policies, then those the stack names literally. They run while
// the planner sets up and evaluates the stack; the refresh takes each one over
// (CloudPort.takeStarted) instead of reading again, so every distinct policy is still read once.
// Every read of the plan (policies and data sources) goes through one --parallelism limit here,
// those the planner starts later included: never more than that many at once.
import { setImmediate as nextTurn } from "node:timers/promises";
import pLimit from "p-limit";
import type { Policy } from "../generated/schemas.js";
import type { CloudPort, PolicyRef, StartedRead } from "../contracts/cloud-port.js";
import { sharedSignal } from "./shared-signal.js";

export interface Prefetch {
  /** The port to plan with: reads started here are handed over once; every read is paced. */
  port: CloudPort;
  /** Starts the read of each policy not started yet, in order; resolves once all are started
   *  (it lets the first ones go out while it works out the rest). */
  start(policies: Iterable<PolicyRef>): Promise<void>;
  /** Aborts with the caller's signal (and on dispose), with no listener limit: every read of the
   *  plan can wait on it (./shared-signal.ts). */
  signal: AbortSignal;
  /** Planning is over: reads nobody took and not yet sent are not sent (call it in `finally`). */
  dispose(): void;
}

/** Longest stretch (ms) of starting reads without letting the event loop send them. */
const YIELD_EVERY_MS = 2;

/** A prefetch over `cloud`; its reads stop (none is sent) once `signal` aborts or on dispose.
 *  `known`: policies read already ("{kind} {name}"), handed over as reads made. */
export function prefetching(
  cloud: CloudPort,
  parallelism: number,
  signal?: AbortSignal,
  known: ReadonlyMap<string, Policy | undefined> = new Map(),
): Prefetch {
  const limit = pLimit(Math.max(1, parallelism));
  // Every read waits on it: up to all of them at once.
  const stop = sharedSignal(signal);
  const started = new Map<string, StartedRead>();
  const seen = new Set<string>();
  // Policies already read (`known`: by the settlement of pending writes) are not read again.
  for (const [key, policy] of known) {
    seen.add(key);
    started.set(key, { sent: Promise.resolve(), policy: Promise.resolve(policy && structuredClone(policy)) });
  }

  const port: CloudPort = {
    getIamPolicy: (kind, name, s) => limit(() => cloud.getIamPolicy(kind, name, s)),
    getFederation: (name, s) => limit(() => cloud.getFederation(name, s)),
    modifyPolicy: (kind, name, mods, initial, s, planned) => cloud.modifyPolicy(kind, name, mods, initial, s, planned),
    takeStarted(kind, name) {
      const key = `${kind} ${name}`;
      const read = started.get(key);
      started.delete(key);
      return read;
    },
  };

  const startOne = ({ kind, name }: PolicyRef): boolean => {
    const key = `${kind} ${name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    let sent!: () => void;
    const read: StartedRead = {
      sent: new Promise<void>((resolve) => (sent = resolve)),
      policy: limit((): Promise<Policy | undefined> => {
        sent();
        return cloud.getIamPolicy(kind, name, stop.signal);
      }),
    };
    // Whoever takes the read reports its failure; one nobody takes must not crash the process.
    read.policy.catch(() => {});
    started.set(key, read);
    return true;
  };

  return {
    port,
    signal: stop.signal,
    async start(policies) {
      // Once the first `parallelism` reads are started, and then every few milliseconds.
      let first = parallelism;
      let yielded = Date.now();
      for (const p of policies) {
        if (startOne(p)) first--;
        if (first === 0 || Date.now() - yielded >= YIELD_EVERY_MS) {
          first = -1;
          await nextTurn();
          yielded = Date.now();
        }
      }
    },
    dispose() {
      stop.dispose();
      stop.abort();
      started.clear();
    },
  };
}
