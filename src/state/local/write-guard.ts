// The local backend's compare-and-swap is a check (the stored lineage and serial) followed by a
// rename; two writers could both pass the check. The guard serialises them: a small file created
// exclusively beside the state for the time of one check-and-rename (milliseconds). A guard left
// by a writer that died (its pid is gone, or the guard is old) is taken over.
import { randomBytes } from "node:crypto";
import { link, readFile, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { errnoCode, fsError, pidAlive } from "../../fs/errors.js";

/** How long a writer waits for another one's check-and-rename. */
const WAIT_MS = 10_000;
/** A guard this old is a leftover whatever its pid says (pids are reused). */
const STALE_MS = 30_000;

async function leftover(guard: string): Promise<boolean> {
  const st = await stat(guard).catch(() => undefined);
  if (!st) return false;
  if (Date.now() - st.mtimeMs > STALE_MS) return true;
  const text = await readFile(guard, "utf8").catch(() => undefined);
  // Gone meanwhile (released): not a leftover, the next attempt may take it.
  if (text === undefined) return false;
  const pid = Number(text.trim());
  return !Number.isInteger(pid) || pid <= 0 || !pidAlive(pid);
}

/** Creates the guard holding our pid in one step (a link to a filled temp file), so a guard is
 *  never seen empty; false when another writer holds it. The temp file is named like the state
 *  store's own temp files, so a killed writer's is cleaned up with them. */
async function take(guard: string): Promise<boolean> {
  const tmp = join(
    dirname(guard),
    `.${basename(guard).replace(/\.cas$/, "")}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`,
  );
  try {
    await writeFile(tmp, String(process.pid), { mode: 0o600, flag: "wx" });
    await link(tmp, guard);
    return true;
  } catch (e) {
    if (errnoCode(e) !== "EEXIST") throw fsError(e, "create", guard);
    return false;
  } finally {
    await rm(tmp, { force: true });
  }
}

export async function withWriteGuard<T>(target: string, fn: () => Promise<T>): Promise<T> {
  const guard = `${target}.cas`;
  const deadline = Date.now() + WAIT_MS;
  while (!(await take(guard))) {
    if (await leftover(guard)) {
      await rm(guard, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new UserError(
        error(`another write to ${target} has not finished after ${WAIT_MS / 1000}s`, {
          code: "state/busy",
          detail: `If no converge command is running, remove ${guard}.`,
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20)));
  }
  try {
    return await fn();
  } finally {
    await rm(guard, { force: true });
  }
}
