// Loading a stack file of either form, without the engine: `validate` needs no more than this.
import type { GivenInputs } from "../config/inputs.js";
import { type LoadResult, loadStackFile } from "../config/load.js";
import type { BackendType } from "../state/backend-types.js";
import { isProgramFile } from "./program-file.js";
import { programsIsolated } from "./program-mode.js";

export interface AnyStackOptions {
  strict?: boolean;
  state?: string;
  callTimeoutMs?: number;
  inputs?: GivenInputs;
  inputsOptional?: boolean;
  offline?: string;
  backendType?: BackendType;
}

/** Loads a YAML stack or a program stack (`.ts`, `.mjs`, `.js`: src/sdk/program.ts, loaded only
 *  when a program is opened), by the file's extension. Under the CLI a program runs in a worker
 *  thread (src/sdk/program-mode.ts). */
export async function loadAnyStackFile(file: string, opts: AnyStackOptions = {}): Promise<LoadResult> {
  if (!isProgramFile(file)) return loadStackFile(file, opts);
  if (programsIsolated()) return (await import("./program-isolated.js")).loadProgramFileIsolated(file, opts);
  return (await import("./program.js")).loadProgramFile(file, opts);
}
