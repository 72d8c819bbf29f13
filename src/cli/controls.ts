// How the CLI stops the phases of an operation (../engine/operations.ts): Ctrl-C and the other
// interrupts (./interrupt.ts) while planning stop the reads and nothing is changed; while applying,
// the first one lets the writes in flight finish and starts no other, and is acknowledged where the
// view shows it; an interrupt that came while the plan was shown starts nothing.
import type { Controls } from "../engine/operations.js";
import { APPLYING, catchInterrupts, haltForExit, planning, stoppedBy, stopping } from "./interrupt.js";
import type { PlanView, ApplyView } from "./views/view.js";

export function cliControls(view: PlanView | ApplyView, lockTimeoutMs: number | undefined): Controls {
  return {
    ...(lockTimeoutMs !== undefined ? { lockTimeoutMs } : {}),
    async planning(run) {
      const { value, interrupted } = await planning(run);
      return { value, stopped: interrupted };
    },
    async applying(run) {
      const interrupts = catchInterrupts(APPLYING);
      interrupts.beforeExit(() => view.flush());
      const notice = "notice" in view ? view.notice?.bind(view) : undefined;
      if (notice) interrupts.announceWith(notice);
      try {
        const value = await run(interrupts.signal);
        return { value, stopped: stoppedBy(interrupts.signal) };
      } finally {
        interrupts.dispose();
      }
    },
    async beforeApply() {
      // An interrupt while the plan was shown (a signal, its reader gone): nothing starts, not even
      // the claims' record; the process exits once the lock is released.
      if (stopping()) await haltForExit();
    },
  };
}
