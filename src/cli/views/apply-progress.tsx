// Live apply progress in a terminal: a line per resource with a spinner, elapsed time and result.
import { useEffect, useState } from "react";
import { Box, Text, render } from "ink";
import { Spinner } from "@inkjs/ui";
import { terminalText } from "../../diagnostics/terminal-text.js";
import type { EngineEvent } from "../../contracts/events.js";
import { verbs } from "../render/verbs.js";
import { RetryTally, retryText } from "../render/retry-text.js";

interface Row {
  address: string;
  action: string;
  phase: "start" | "done" | "error" | "skipped" | "interrupted";
  started: number;
  ms?: number;
  message?: string;
  /** The policy whose write makes the change (none: a change that writes no policy). */
  policy?: string;
}

export class ProgressModel {
  rows = new Map<string, Row>();
  listeners = new Set<() => void>();
  retries = new RetryTally();
  lastRetry: string | undefined;
  /** Lines the operation said meanwhile (an interrupt acknowledged), drawn under the rows. */
  notices: string[] = [];
  /** The policies whose write has been sent: a change on another one is still queued. */
  writing = new Set<string>();
  notice(line: string): void {
    this.notices.push(terminalText(line));
    for (const l of this.listeners) l();
  }
  on(e: EngineEvent): void {
    if (e.type === "retry") {
      this.retries.add(e);
      this.lastRetry = retryText(e);
      for (const l of this.listeners) l();
      return;
    }
    if (e.type === "policy-write" && e.phase === "start") {
      this.writing.add(e.policy);
      for (const l of this.listeners) l();
      return;
    }
    if (e.type !== "step" || e.action === "no-op") return;
    const prev = this.rows.get(e.address);
    // What the rows show comes from the stack and the server: escaped once, here.
    this.rows.set(e.address, {
      address: terminalText(e.address),
      action: e.action,
      phase: e.phase,
      started: prev?.started ?? Date.now(),
      ...(e.ms !== undefined ? { ms: e.ms } : {}),
      ...(e.error ? { message: terminalText(e.error.detail ?? e.error.summary) } : {}),
      ...(e.policy ? { policy: e.policy } : {}),
    });
    for (const l of this.listeners) l();
  }
}

export function ProgressView({ model }: { model: ProgressModel }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((t) => t + 1);
    model.listeners.add(l);
    const timer = setInterval(l, 250);
    return () => {
      model.listeners.delete(l);
      clearInterval(timer);
    };
  }, [model]);
  return (
    <Box flexDirection="column">
      {[...model.rows.values()].map((r) => {
        const [doing, done] = verbs(r.action);
        const secs = ((r.ms ?? Date.now() - r.started) / 1000).toFixed(1);
        if (r.phase === "start" && r.policy !== undefined && !model.writing.has(r.policy))
          return <Spinner key={r.address} label={`${r.address}: queued (its policy's write has not started yet)`} />;
        if (r.phase === "start")
          return <Spinner key={r.address} label={`${r.address}: ${doing}... [${secs}s elapsed]`} />;
        if (r.phase === "done")
          return (
            <Text key={r.address} color="green">
              ✔ {r.address}: {done} after {secs}s
            </Text>
          );
        if (r.phase === "skipped")
          return (
            <Text key={r.address} color="yellow">
              - {r.address}: skipped (a change it depends on failed)
            </Text>
          );
        if (r.phase === "interrupted")
          return (
            <Text key={r.address} color="yellow">
              - {r.address}: not started (interrupted)
            </Text>
          );
        return (
          <Text key={r.address} color="red">
            ✘ {r.address}: failed: {r.message}
          </Text>
        );
      })}
      {model.lastRetry ? (
        <Text color="yellow" wrap="truncate-end">
          ↻ {model.retries.total} {model.retries.total === 1 ? "retry" : "retries"} so far; last: {model.lastRetry}
        </Text>
      ) : null}
      {model.notices.map((n, i) => (
        <Text key={`notice-${i}`} color="yellow">
          {n}
        </Text>
      ))}
    </Box>
  );
}

export function startProgressView(model: ProgressModel): { stop: () => Promise<void> } {
  const instance = render(<ProgressView model={model} />, { exitOnCtrlC: false, patchConsole: false });
  return {
    async stop() {
      instance.rerender(<ProgressView model={model} />);
      instance.unmount();
      await instance.waitUntilExit();
    },
  };
}
