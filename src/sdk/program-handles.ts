// The handles a program stack opened and left open (a server, a socket, a child process, a file
// watcher): converge does not wait for them once the command is done. Kept apart from
// ./program-guard.ts, which tracks those opened while the program runs, so that the CLI can let
// them go without loading the program machinery (a YAML stack never does). Handles opened later
// by their callbacks are not seen one by one: once a program has run, the CLI ends its process
// when the command is done (src/cli/main.ts).

/** What a handle left open is, in the warning: by async_hooks type. */
const KINDS: Record<string, string> = {
  TCPWRAP: "socket",
  TCPSERVERWRAP: "server",
  PIPEWRAP: "pipe",
  PIPESERVERWRAP: "server",
  PROCESSWRAP: "child process",
  UDPWRAP: "UDP socket",
  FSEVENTWRAP: "file watcher",
  STATWATCHER: "file watcher",
};

/** The async_hooks types of the handles tracked (each keeps the event loop alive while ref'd). */
export const HANDLE_TYPES: ReadonlySet<string> = new Set(Object.keys(KINDS));

interface Left {
  type: string;
  handle: { unref?: () => void; hasRef?: () => boolean };
}

const left = new Map<number, Left>();

/** Whether a handle is still open and keeps the event loop alive (a closed one reports no ref). */
const isOpen = (handle: Left["handle"]): boolean => typeof handle.hasRef !== "function" || handle.hasRef();
let ran = false;

/** A program stack has run in this process (its handles, tracked or not, are not converge's). */
export function programRan(): void {
  ran = true;
}

/** A program run in a worker thread (./program-isolated.ts): what it left open when its default
 *  export settled, and how to stop waiting for the worker. */
let isolatedRun: { left: string | undefined; letGo(): void } | undefined;

/** A program stack ran in a worker thread of this process, leaving `left` open. */
export function programRanIsolated(left: string | undefined, letGo: () => void): void {
  ran = true;
  isolatedRun = { left, letGo };
}

/** Whether a program stack ran in this process. */
export function aProgramRan(): boolean {
  return ran;
}

/** Records a handle a program opened (by its async id). */
export function programOpened(id: number, type: string, handle: unknown): void {
  left.set(id, { type, handle: handle as Left["handle"] });
}

/** Forgets a handle that was closed. */
export function programClosed(id: number): void {
  left.delete(id);
}

/** Forgets the handles no longer open (or no longer ref'd), whose close the hook did not see
 *  (it is on only while a program runs): a long-lived process (the Automation API's) running
 *  program after program keeps only those still open. Returns how many are kept. */
export function forgetClosedHandles(): number {
  for (const [id, { handle }] of left) if (!isOpen(handle)) left.delete(id);
  return left.size;
}

/**
 * Lets every handle a program left open go (unref: the process may exit without waiting for it;
 * nothing is closed or killed). Returns what they were, e.g. "1 server and 1 child process", or
 * undefined when none is still open.
 */
export function letProgramHandlesGo(): string | undefined {
  const open = openProgramHandles(true);
  left.clear();
  const isolated = isolatedRun;
  isolatedRun = undefined;
  if (isolated) {
    isolated.letGo();
    return open ?? isolated.left;
  }
  return open;
}

/** What the handles a program left open are, e.g. "1 server and 1 child process" (undefined:
 *  none); with `unref`, each is let go as well. */
export function openProgramHandles(unref = false): string | undefined {
  const counts = new Map<string, number>();
  for (const { type, handle } of left.values()) {
    if (!isOpen(handle)) continue;
    if (unref) handle.unref?.();
    const kind = KINDS[type] ?? type;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  if (!counts.size) return undefined;
  const parts = [...counts].map(([kind, n]) => `${n} ${kind}${n === 1 ? "" : kind.endsWith("s") ? "es" : "s"}`);
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}
