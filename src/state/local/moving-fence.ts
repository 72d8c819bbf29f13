// The migration fence of a local state: {state file}.moving, written when `state migrate` starts
// moving the state away and removed when it ends (../move-fence.ts says what it fences).
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { fsError, readTextIfExists } from "../../fs/errors.js";
import { writeFileAtomic } from "../../fs/atomic-file.js";
import { fenceFrom, type MoveFence } from "../move-fence.js";

/** The fence of an unfinished `state migrate` of the state file `path`. */
export function movingFile(path: string): string {
  return `${path}.moving`;
}

/** The fence of the state file `path`; undefined when there is none. */
export async function readMovingFence(path: string): Promise<MoveFence | undefined> {
  const file = movingFile(path);
  const text = await readTextIfExists(file, "read the migration fence");
  if (text === undefined) return undefined;
  let fence: MoveFence | undefined;
  try {
    fence = fenceFrom(JSON.parse(text));
  } catch {
    fence = undefined;
  }
  const detail = "converge keeps the fence of an unfinished state migrate there. Move it away and run again.";
  if (!fence) throw new UserError(error(`${file} is not a migration fence converge wrote`, { file, detail }));
  return fence;
}

/** Fences the state file `path` with `fence`, unless it is fenced already. */
export async function writeMovingFence(path: string, fence: MoveFence): Promise<void> {
  if (await readMovingFence(path)) return;
  const file = movingFile(path);
  try {
    await writeFileAtomic(file, `${JSON.stringify(fence)}\n`);
  } catch (e) {
    throw fsError(e, "write the migration fence", file);
  }
}
