// Words for retries: a line per retry while it happens, and a tally for the summary. Retries are
// normal (a flaky network, quota, another writer on the same policy), but a reviewer should see
// them: many of them explain a slow run, and an etag conflict means someone else edited the policy.
import { terminalText } from "../../diagnostics/terminal-text.js";
import type { EngineEvent } from "../../contracts/events.js";
import { type Line, seg } from "../../diagnostics/lines.js";
import { redactText } from "../../config/redact.js";

export type RetryEvent = Extract<EngineEvent, { type: "retry" }>;

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** What went wrong, as the tally counts it: the canonical status, or "etag conflict". */
const cause = (e: RetryEvent) => (e.reason === "etag-conflict" ? "etag conflict" : e.status);

/** One line, printable: names and statuses come from the stack and the server. */
export function retryText(e: RetryEvent): string {
  return terminalText(retryWords(e));
}

/** The line's words as they are (for JSON, which escapes what it must itself). */
export function retryWords(e: RetryEvent): string {
  const next = `${e.attempt + 1} of ${e.maxAttempts}`;
  if (e.reason === "etag-conflict") {
    return (
      `${e.resource}: another writer changed the policy (etag conflict); reading it ` +
      `again and re-applying in ${secs(e.delayMs)} (round ${next})`
    );
  }
  const http = e.httpStatus ? ` (HTTP ${e.httpStatus})` : "";
  return `${e.resource}: ${e.call} failed with ${e.status}${http}; retrying in ${secs(e.delayMs)} (attempt ${next})`;
}

export class RetryTally {
  private readonly byCause = new Map<string, number>();
  total = 0;

  add(e: RetryEvent): void {
    this.total++;
    this.byCause.set(cause(e), (this.byCause.get(cause(e)) ?? 0) + 1);
  }

  /** e.g. { UNAVAILABLE: 5, "etag conflict": 2 }, most frequent first. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.byCause].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
  }

  /** "Retried 7 times: 5 × UNAVAILABLE, 2 × etag conflict." — nothing when there was no retry. */
  lines(): Line[] {
    if (!this.total) return [];
    const parts = Object.entries(this.counts()).map(([c, n]) => `${n} × ${c}`);
    return [[seg(`Retried ${this.total} ${this.total === 1 ? "time" : "times"}: ${parts.join(", ")}.`, "warning")]];
  }
}

/** For commands without a progress view (import): a line per retry in human mode. */
export function retryPrinter(o: { json?: boolean }): (e: EngineEvent) => void {
  return (e) => {
    if (e.type === "retry" && !o.json) process.stdout.write(redactText(retryText(e)) + "\n");
  };
}
