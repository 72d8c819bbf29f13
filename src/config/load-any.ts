// Loading a stack file of either form, without the engine: `validate` needs no more than this.
import type { GivenInputs } from "./inputs.js";
import { type LoadResult, loadStackFile } from "./load.js";
import { isProgramFile } from "../sdk/program-file.js";

/** Loads a YAML stack or a program stack (`.ts`, `.mjs`, `.js`: src/sdk/program.ts, loaded only
 *  when a program is opened), by the file's extension. */
export async function loadAnyStackFile(file: string, opts: { strict?: boolean; state?: string; callTimeoutMs?: number; inputs?: GivenInputs; inputsOptional?: boolean; offline?: string } = {}): Promise<LoadResult> {
  if (!isProgramFile(file)) return loadStackFile(file, opts);
  const sdk = await import("../sdk/program.js");
  return sdk.loadProgramFile(file, opts);
}
