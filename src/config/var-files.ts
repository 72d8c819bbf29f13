// The values given for a stack's inputs from outside: `--var name=value` arguments, `--var-file`
// files (YAML or JSON, read with positions) and CONVERGE_VAR_ environment variables. The I/O of
// inputs lives here; checking them against the stack is ./inputs.ts.
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { ENV_PREFIX, type GivenInputs, type InputValue } from "./inputs.js";
import { SourceDocument } from "../yaml/source.js";
import { decodeUtf8 } from "../base/utf8.js";
import { InputFileError, MAX_SOURCE_BYTES, readInputFile } from "../fs/input-file.js";

export interface InputArgs {
  /** --var name=value, in command-line order */
  vars?: readonly string[];
  /** --var-file FILE, in command-line order */
  varFiles?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function varArgs(args: readonly string[], diags: Diagnostic[], unread: string[]): InputValue[] {
  const out: InputValue[] = [];
  for (const arg of args) {
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (eq < 0 || !NAME.test(name)) {
      if (NAME.test(name)) unread.push(name);
      diags.push(
        error(`--var "${eq < 0 ? arg : name}" is not name=value`, {
          code: "input/syntax",
          detail: 'Write --var name=value (lists and maps as JSON: --var teams=\'["sre","data"]\').',
        }),
      );
      continue;
    }
    out.push({ name, value: arg.slice(eq + 1), text: true, source: { kind: "flag", flag: "--var", name } });
  }
  return out;
}

/** The values of one var file: a mapping of input names to values, each at its line. */
function varFile(path: string, diags: Diagnostic[]): InputValue[] {
  let bytes: Buffer;
  try {
    bytes = readInputFile(path, "--var-file", MAX_SOURCE_BYTES);
  } catch (e) {
    if (e instanceof InputFileError) {
      diags.push(error(e.message, { code: "input/file", file: path, detail: e.detail }));
      return [];
    }
    diags.push(
      error(
        `cannot read --var-file ${path}: ${
          (e as NodeJS.ErrnoException).code === "ENOENT" ? "it does not exist" : (e as Error).message
        }`,
        { code: "input/file" },
      ),
    );
    return [];
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    diags.push(
      error(`--var-file ${path} is not valid UTF-8`, {
        code: "input/file",
        file: path,
        line: decoded.invalid.line,
        column: decoded.invalid.column,
      }),
    );
    return [];
  }
  const src = new SourceDocument(path, decoded.text);
  const bad = src.errors[0] ?? src.structureErrors[0];
  if (bad) {
    const { line, column } = src.positionAt("pos" in bad ? bad.pos[0] : bad.offset);
    const what = !("message" in bad)
      ? bad.summary
      : bad.code === "MULTIPLE_DOCS"
        ? `a var file holds one YAML document; found a second at ${line}:${column}`
        : bad.message.split("\n")[0];
    diags.push(error(`--var-file ${path}: ${what}`, { code: "input/file", file: path, line, column }));
    return [];
  }
  const root = src.toJS();
  if (root === null || root === undefined) return [];
  if (typeof root !== "object" || Array.isArray(root)) {
    diags.push(
      error(`--var-file ${path} must be a mapping of input names to values`, {
        code: "input/file",
        file: path,
        line: 1,
        column: 1,
      }),
    );
    return [];
  }
  return Object.entries(root as Record<string, unknown>).map(([name, value]) => {
    const pos = src.position([name]);
    return { name, value, text: false, source: { kind: "file", file: path, line: pos.line, column: pos.column } };
  });
}

function envValues(env: NodeJS.ProcessEnv): InputValue[] {
  const out: InputValue[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith(ENV_PREFIX) || v === undefined) continue;
    const name = k.slice(ENV_PREFIX.length);
    if (NAME.test(name)) out.push({ name, value: v, text: true, source: { kind: "env", variable: k } });
  }
  return out;
}

/** Every value given for inputs, and the diagnostics of reading them (also `given.problems`, for
 *  the loader to report with the stack's). */
export function readInputs(args: InputArgs): { given: GivenInputs; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const unread: string[] = [];
  const given: GivenInputs = {
    vars: varArgs(args.vars ?? [], diagnostics, unread),
    unread,
    files: (args.varFiles ?? []).flatMap((f) => varFile(f, diagnostics)),
    env: envValues(args.env ?? {}),
    problems: diagnostics,
  };
  return { given, diagnostics };
}
