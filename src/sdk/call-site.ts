// Where a program called the SDK: the frame of the program's own file in a stack trace, so a
// diagnostic about a resource points at its constructor call (file:line:column of the .ts file:
// tsx turns on source maps, so the positions are the TypeScript source's).
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Position } from "../yaml/source.js";

export interface CallSite extends Position {
  file: string;
}

const FRAME = /\(?((?:file:\/\/|\/|[A-Za-z]:\\)[^()]*?):(\d+):(\d+)\)?\s*$/;

function framePath(raw: string): string {
  const noQuery = raw.replace(/\?[^/\\]*$/, "");
  return noQuery.startsWith("file://") ? fileURLToPath(noQuery) : noQuery;
}

/** The stack's frames below this call, as file:line:column. */
export function callerFrames(): CallSite[] {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  return framesOf(stack);
}

/** The frames of a stack trace's text. */
export function framesOf(stack: string): CallSite[] {
  const out: CallSite[] = [];
  for (const line of stack.split("\n").slice(1)) {
    const m = FRAME.exec(line.trim());
    if (m) out.push({ file: framePath(m[1]!), line: Number(m[2]), column: Number(m[3]) });
  }
  return out;
}

/** The directories of converge's own modules: frames there are not the program's. Under source
 *  maps (tsx, node --enable-source-maps) a frame of dist/ is shown at its source in src/, so both
 *  are converge's (the package's root is two levels above this module, in either). */
const OWN_DIRS = ((root: string) => [join(root, "src", sep), join(root, "dist", sep)])(
  fileURLToPath(new URL("../..", import.meta.url)),
);

const converges = (path: string) => OWN_DIRS.some((d) => path.startsWith(d));

/** The first frame in `file`; else the first frame outside converge and node's internals. */
export function callSiteIn(file: string | undefined): CallSite | undefined {
  const frames = callerFrames().filter((f) => !converges(f.file) && !f.file.startsWith("node:"));
  return (file !== undefined ? frames.find((f) => f.file === file) : undefined) ?? frames[0];
}
