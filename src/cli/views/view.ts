// What a command shows while the engine plans and applies: a view subscribes to the engine's
// events (progress) and is told when the plan is made and how the apply ended. Three kinds:
// human (plain lines, ./human-view.ts), live (ink redraws in a terminal, ./live-view.ts) and
// JSON (Terraform's machine-readable UI, ./json-view.ts). Views render; the command decides the
// exit code from the engine's values, never from what a view printed.
import type { ApplyResult } from "../../apply/executor.js";
import type { Emit } from "../../contracts/events.js";
import type { ChangeCounts } from "../../engine/tally.js";
import type { ShownPlan } from "../../engine/operations.js";
import type { Plan } from "../../generated/schemas.js";
import type { Stopped } from "../../engine/operations.js";

/** How an apply ended, for its summary. */
export interface ApplyReport {
  result: ApplyResult;
  counts: ChangeCounts;
  destroy: boolean;
  /** What stopped it early (Ctrl-C or --timeout); false when nothing did. */
  stopped: Stopped;
}

/** What `plan` shows: its progress, then the plan. */
export interface PlanView {
  /** Subscribes to the engine's events. */
  readonly onEvent: Emit;
  /** The plan is made: its diagnostics and, unless it has errors, its changes. */
  planned(shown: ShownPlan): Promise<void>;
  /** Writes what is buffered: before anything else is written, and before a second Ctrl-C exits. */
  flush(): void;
  /** Stops drawing and timers; the view is done. */
  close(): Promise<void>;
}

/** What `apply` and `destroy` show: the plan, the prompt, the apply's progress and its end. */
export interface ApplyView extends PlanView {
  /** A saved plan was made again and matches what was reviewed: its diagnostics (and, for a
   *  machine, its changes) before the apply. */
  replanned(shown: ShownPlan): Promise<void>;
  /** Asks whether to apply the plan; true when approved. */
  approve(shown: ShownPlan, destroy: boolean): Promise<boolean>;
  /** The apply starts (its progress follows as events). */
  applying(plan: Plan): void;
  /** The plan had nothing to apply (no approval was asked, nothing ran). */
  unchanged?(shown: ShownPlan, destroy: boolean): Promise<void>;
  /** How the apply ended. */
  applied(report: ApplyReport): Promise<void>;
  /** Shows a line the operation says while the view draws (an interrupt acknowledged), where a
   *  view that redraws the terminal in place keeps it on screen; without it, stderr has it. */
  notice?(line: string): void;
}
