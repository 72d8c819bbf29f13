// The engine never renders: it emits these typed events; ink views and the JSON renderer
// subscribe.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { ShownAction } from "./actions.js";

/** A step's action: the one action of a change as shown (src/contracts/actions.ts); an import that also updates is
 *  reported as its import. */
export type StepAction = Exclude<ShownAction, "import-update">;

export type EngineEvent =
  /** resources: the state resources this read of a policy refreshes (none for a policy only new
   *  resources are on). */
  | {
      type: "refresh";
      policy: string;
      resources: readonly { address: string; type: string }[];
      phase: "start" | "done" | "error";
      ms?: number;
    }
  | { type: "read"; address: string; token: string; object: string; phase: "start" | "done" | "error"; ms?: number }
  /** interrupted: started, but stopped by Ctrl-C before its change was made (nothing of it was recorded). */
  | {
      type: "step";
      address: string;
      action: StepAction;
      phase: "start" | "done" | "error" | "skipped" | "interrupted";
      ms?: number;
      error?: Diagnostic;
      policy?: string;
    }
  /** interrupted: Ctrl-C came before the write was sent; nothing was written. */
  | {
      type: "policy-write";
      policy: string;
      phase: "start" | "done" | "error" | "interrupted";
      attempts?: number;
      written?: boolean;
      ms?: number;
    }
  | { type: "state-saved"; serial: number }
  /** A cloud call or a policy read-modify-write that will be tried again: a transient error
   *  (UNAVAILABLE, RESOURCE_EXHAUSTED, a timeout…) or an etag conflict with another writer. */
  | {
      type: "retry";
      resource: string;
      call: string;
      status: string;
      httpStatus?: number;
      attempt: number;
      maxAttempts: number;
      delayMs: number;
      reason: "transient" | "etag-conflict";
    }
  | { type: "diagnostic"; diagnostic: Diagnostic };

export type Emit = (event: EngineEvent) => void;

export const noEmit: Emit = () => {};
