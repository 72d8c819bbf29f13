// Shared helpers for the state tests (not a test file itself).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { State, StateResource, WriteIntent } from "../../src/generated/schemas.js";
import type { LocalStateStore, StateVersion } from "../../src/state/index.js";
import { readFileSync, statSync } from "node:fs";
import { UserError } from "../../src/diagnostics/diagnostic.js";

/** A fresh temp directory; call the returned cleanup in afterEach. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "converge-state-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The pid of a process that has exited (so `process.kill(pid, 0)` throws ESRCH). */
/**
 * Resolves with the first stdout line of `proc` matching `re`; rejects if the child's output ends
 * without one. It waits for "close" (the child has exited and its stdio streams have ended), not
 * "exit": node may emit "exit" before the last data the child wrote has been read from its pipe,
 * and a child that prints its line and exits at once then looked as if it had printed nothing.
 */
export function waitForLine(proc: Pick<ChildProcess, "stdout" | "stderr" | "on">, re: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => re.test(l));
      if (line !== undefined) resolve(line);
    });
    proc.on("close", (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`child exited (${code ?? signal}) before printing ${re}: ${out}${err}`)),
    );
  });
}

export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid;
  if (pid === undefined) throw new Error("spawn failed");
  await new Promise<void>((resolve) => child.on("exit", () => resolve()));
  // exit fires after the child is reaped, so the pid is free now
  try {
    process.kill(pid, 0);
    throw new Error(`pid ${pid} still exists`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
  }
  return pid;
}

export function resource(address: string, extra: Partial<StateResource> = {}): StateResource {
  return {
    address,
    type: "cloudnative:backup/v1:RestorePlanIamBinding",
    id: `id-${address}`,
    inputs: {},
    outputs: {},
    dependencies: [],
    ...extra,
  };
}

/** A write-ahead intent (src/apply/intents.ts) of one resource's grant on the restore plan `id`. */
export function writeIntent(id: string, extra: Partial<WriteIntent> = {}): WriteIntent {
  return {
    id,
    created: "2024-01-01T00:00:00.000Z",
    plan_digest: `sha256:${"0".repeat(64)}`,
    kind: "restorePlan",
    policy: `projects/p/locations/l/restorePlans/${id}`,
    changes: [
      {
        address: `r_${id}`,
        type: "cloudnative:backup/v1:RestorePlanIamBinding",
        mods: [{ grant: { role: "roles/viewer", member: `user:${id}@example.com` } }],
      },
    ],
    ...extra,
  };
}

/** The IDs of `intents`, in order. */
export const intentIds = (intents: readonly WriteIntent[]): string[] => intents.map((i) => i.id);

/** Runs `fn` and returns the UserError it throws (fails if it throws anything else or nothing). */
export async function userError(fn: () => Promise<unknown>): Promise<UserError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof UserError) return e;
    throw e;
  }
  throw new Error("expected a UserError, nothing was thrown");
}

export async function mode(file: string): Promise<number> {
  const { stat } = await import("node:fs/promises");
  return (await stat(file)).mode & 0o777;
}

/** The version the state file holds now (undefined: none, or not a regular readable state), read
 *  without the store's checks: for tests of the file mechanics that write over whatever is there. */
export function versionOnDisk(path: string): StateVersion | undefined {
  try {
    if (!statSync(path).isFile()) return undefined;
    const v = JSON.parse(readFileSync(path, "utf8")) as Partial<State>;
    return typeof v.lineage === "string" && typeof v.serial === "number"
      ? { lineage: v.lineage, serial: v.serial }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Writes over the state the file holds now (the compare-and-swap itself is tested by the
 *  conformance suite, test/state/conformance.ts). */
export function overwrite(store: LocalStateStore, next: State): Promise<State> {
  return store.write(next, versionOnDisk(store.path));
}
