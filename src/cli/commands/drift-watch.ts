// `converge drift --watch`: the check every --interval (with jitter), each drift printed once, until
// interrupted. On PostgreSQL each drift found, and each gone, is recorded in the history (`state
// history` shows it). SIGUSR1 starts the next check at once.
import { systemClock, type WatchedCheck, watchDrift } from "../../engine/drift-watch.js";
import type { StackSession } from "../../engine/session.js";
import { UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { driftText } from "../render/drift-text.js";
import { writeOut } from "../common.js";
import { durationMs } from "../deadline.js";
import { EXIT } from "../exit-codes.js";
import type { StackOptions } from "../common.js";
import type { DriftReport } from "../../engine/drift.js";

/** `converge drift`'s options. */
export interface DriftOptions extends StackOptions {
  format: string;
  adopt?: boolean;
  remediate?: boolean;
  out?: string;
  force?: boolean;
  watch?: boolean;
  interval: string;
}

/** The shortest --interval: a check reads every policy of the stack. */
const MIN_INTERVAL_MS = 1_000;

function intervalOf(o: DriftOptions): number {
  const ms = durationMs(o.interval, "--interval")!;
  if (ms < MIN_INTERVAL_MS)
    throw new UserError({ severity: "error", summary: `--interval must be 1s or more, got "${o.interval}"` });
  return ms;
}

const minutes = (ms: number) => (ms >= 60_000 ? `${Math.round(ms / 6_000) / 10}m` : `${Math.round(ms / 100) / 10}s`);

/** What one check prints: new drift on stdout (text, or a JSON line), a status line on stderr. */
async function printCheck(c: WatchedCheck, o: DriftOptions, stack: string): Promise<void> {
  const when = c.at.toISOString();
  if (o.json) {
    const line = {
      type: "drift_check",
      check: c.n,
      at: when,
      stack,
      errored: c.report.errored,
      new: c.fresh,
      cleared: c.cleared,
      ongoing: c.ongoing,
      policies_read: c.report.policies,
    };
    await writeOut(jsonText(line) + "\n");
  } else if (c.fresh.length) await writeOut(driftText(c.fresh, c.report.policies, `New drift at ${when}`));
  if (!o.json && c.cleared.length) {
    await writeOut(
      `Drift gone at ${when}: ${c.cleared.length} ${c.cleared.length === 1 ? "difference" : "differences"} ` +
        "reported before are no longer there.\n",
    );
  }
  const status = c.report.errored
    ? "failed (see above)"
    : `${c.fresh.length} new, ${c.cleared.length} gone, ${c.ongoing} still there`;
  process.stderr.write(
    terminalText(`Check ${c.n} at ${when}: ${status}; next check in ~${minutes(c.nextInMs)}.`) + "\n",
  );
}

/** Records what the check found new and what is gone (PostgreSQL only). */
async function recordCheck(session: StackSession, c: WatchedCheck): Promise<void> {
  const log = session.store.drift;
  if (!log || c.report.errored || !(c.fresh.length + c.cleared.length)) return;
  const serial = (await session.store.read())?.serial ?? 0;
  const events = [
    ...c.fresh.map((f) => ({ event: "found" as const, finding: f })),
    ...c.cleared.map((f) => ({ event: "cleared" as const, finding: f })),
  ];
  await log.record(events, serial);
}

export async function runWatch(
  session: StackSession,
  o: DriftOptions,
  oneCheck: (s: StackSession, o: DriftOptions) => Promise<DriftReport | number>,
): Promise<number> {
  const intervalMs = intervalOf(o);
  const clock = systemClock();
  const wake = () => clock.wake();
  process.on("SIGUSR1", wake);
  let code: number | undefined;
  try {
    await watchDrift(
      async () => {
        const r = await oneCheck(session, o);
        if (typeof r === "number") code = r;
        return typeof r === "number" ? undefined : r;
      },
      async (c) => {
        // Recorded first: what is printed is in the history, even if the watch is stopped right after.
        await recordCheck(session, c);
        await printCheck(c, o, session.stack.name);
      },
      { intervalMs, clock },
    );
  } finally {
    process.off("SIGUSR1", wake);
  }
  return code ?? EXIT.ok;
}
