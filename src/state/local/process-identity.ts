// Which process a PID names, beyond the number: PIDs are reused once their process has exited, so
// a lock's PID alive on this host does not mean its holder is. On Linux a process is identified by
// its start time (/proc/PID/stat, field 22, in clock ticks since boot), within one boot
// (/proc/sys/kernel/random/boot_id) and one PID namespace (/proc/self/ns/pid). Elsewhere, or when
// /proc cannot be read, nothing is known and nothing is concluded.
import { readFileSync, readlinkSync } from "node:fs";

export interface ProcessIdentity {
  /** The process's start time, in clock ticks after boot (/proc/PID/stat field 22). */
  start: string;
  /** The boot it started in (/proc/sys/kernel/random/boot_id). */
  boot: string;
  /** The PID namespace its PID is in (/proc/self/ns/pid of the process that recorded it). */
  pidNamespace: string;
}

function read(f: () => string): string | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** The start time of process `pid` (field 22 of /proc/PID/stat; the name in field 2, in
 *  parentheses, may hold spaces and parentheses itself, so fields are counted after its last ")"). */
function startTime(pid: number): string | undefined {
  const stat = read(() => readFileSync(`/proc/${pid}/stat`, "utf8"));
  if (stat === undefined) return undefined;
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return start && /^[0-9]+$/.test(start) ? start : undefined;
}

/** The identity of process `pid` as seen from this process, when /proc tells it. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  if (process.platform !== "linux") return undefined;
  const start = startTime(pid);
  const boot = read(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  const pidNamespace = read(() => readlinkSync("/proc/self/ns/pid"));
  return start && boot && pidNamespace ? { start, boot, pidNamespace } : undefined;
}

export function isProcessIdentity(v: unknown): v is ProcessIdentity {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.start === "string" && typeof o.boot === "string" && typeof o.pidNamespace === "string";
}

/**
 * Whether the process recorded as `recorded` under `pid` (on this host) is still running:
 * "running" when the PID names the same process (same start time, boot and namespace), "gone" when
 * it certainly does not (no such PID; or, in the same namespace, another boot or another start
 * time), "unknown" when converge cannot tell (nothing recorded, another PID namespace, /proc
 * unreadable): a live PID may then be the holder or an unrelated process.
 */
export function processState(
  pid: number,
  recorded: ProcessIdentity | undefined,
  alive: (pid: number) => boolean,
): "running" | "gone" | "unknown" {
  if (!alive(pid)) return "gone";
  if (!recorded) return "unknown";
  const now = processIdentity(pid);
  if (!now || now.pidNamespace !== recorded.pidNamespace) return "unknown";
  if (now.boot !== recorded.boot) return "gone";
  return now.start === recorded.start ? "running" : "gone";
}
