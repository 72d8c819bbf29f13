// Which stack files are programs (src/sdk/program.ts runs them): by extension, without loading
// the SDK, so that opening a YAML stack costs nothing more.
import { extname } from "node:path";

const PROGRAM_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);

export function isProgramFile(file: string): boolean {
  return PROGRAM_EXTENSIONS.has(extname(file).toLowerCase());
}
