// Reading a state's text (SPEC section 7): parsing and validating it, and the refusal of a text
// that is not a usable state (where it is wrong, and how to recover the previous version).
import { existsSync } from "node:fs";
import { UserError, error, type Diagnostic } from "../diagnostics/diagnostic.js";
import { jsonSyntaxMessage } from "../diagnostics/json-syntax.js";
import { DATA_TOO_DEEP_DETAIL, jsonDepthError, lineColumnAt, MAX_DATA_DEPTH } from "../diagnostics/nesting.js";
import type { State } from "../generated/schemas.js";
import { describeErrors, validate } from "../schemas/index.js";
import { TOOL_VERSION } from "../base/version.js";
import { isPlainObject } from "../base/plain-object.js";
import { STATE_FORMAT_VERSION } from "./format.js";

/** The index of the string's closing quote, given the index of its opening one. */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i;
}

/**
 * The offsets in `text` (a state's JSON, already parsed without error) where the elements of its
 * top-level "resources" array start (the last such key's, as JSON.parse keeps the last).
 */
function resourceOffsets(text: string): number[] {
  const open: string[] = [];
  let key: string | undefined; // the last string read in the top-level object: before "[", its key
  let inResources = false;
  let atElement = false;
  let offsets: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
    if (atElement && c !== "]") offsets.push(i);
    atElement = false;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (open.length === 1) key = text.slice(i, end + 1);
      i = end;
    } else if (c === "{" || c === "[") {
      if (c === "[" && open.length === 1 && key === '"resources"') [inResources, atElement, offsets] = [true, true, []];
      open.push(c);
    } else if (c === "}" || c === "]") {
      open.pop();
      if (open.length === 1) inResources = false;
    } else if (c === "," && inResources && open.length === 2) atElement = true;
  }
  return offsets;
}

/**
 * An address names one resource: a state that has two entries for it would be planned from one and
 * shown from the other. The error names the first address that repeats and where each copy is
 * (its index and, from `text`, its line and column).
 */
function duplicateAddress(state: State, text: string, file: string, input?: StateInput): UserError | undefined {
  const seen = new Map<string, number>();
  let dup: string | undefined;
  for (let i = 0; i < state.resources.length && dup === undefined; i++) {
    const a = state.resources[i]!.address;
    if (seen.has(a)) dup = a;
    else seen.set(a, i);
  }
  if (dup === undefined) return undefined;
  const offsets = resourceOffsets(text);
  const copies = state.resources.flatMap((r, i) => (r.address === dup ? [i] : []));
  const at = (i: number) => (offsets.length === state.resources.length ? lineColumnAt(text, offsets[i]!) : undefined);
  const places = copies.map((i) => {
    const p = at(i);
    return `resources[${i}]${p ? ` (line ${p.line}, column ${p.column})` : ""}`;
  });
  return corrupt(
    file,
    `${input?.label ?? "state file"} ${file} is not a valid converge state: resource address ` +
      `${JSON.stringify(dup)} appears ${copies.length} times, at ${places.join(", ")}; an address names one ` +
      `resource`,
    at(copies[1]!) ?? {},
    input,
  );
}

/** Where the previous version of a damaged state file is, for the refusal's detail. */
function backupAdvice(file: string): string | undefined {
  if (file.endsWith(".backup")) return undefined;
  const backup = `${file}.backup`;
  return existsSync(backup)
    ? `The previous version of the state is kept in ${backup}. If ${file} cannot be repaired, ` +
        `inspect the backup and copy it over ${file} (it may be one write behind the cloud; run plan afterwards).`
    : `No backup (${backup}) exists.`;
}

/** The refusal of a state's text; `where.detail` comes before the advice. */
function corrupt(file: string, summary: string, where: Partial<Diagnostic> = {}, input?: StateInput): UserError {
  const detail = [where.detail, input ? input.advice : backupAdvice(file)].filter(Boolean).join(" ");
  return new UserError(error(summary, { file, ...where, ...(detail ? { detail } : {}) }));
}

/** A state text that is an input (state push FILE), not the stored state: a refusal calls it
 *  `label` and gives `advice` instead of pointing to a .backup file (FILE has none; the stored
 *  state is not the one at fault). */
export interface StateInput {
  label: string;
  advice: string;
}

/**
 * Parses and validates the text of a state file (its schema, and each resource address once).
 * Anything wrong is a UserError naming the file (and the .backup file when there is one), or, for
 * an input, with the input's label and advice.
 */
export function parseState(text: string, file: string, input?: StateInput): State {
  const label = input?.label ?? "state file";
  // Not text.trim(): that copies the whole file (100 MB at 100,000 resources) to find it is not empty.
  if (/^\s*$/.test(text)) throw corrupt(file, `${label} ${file} is empty`, {}, input);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const pos = /at position (\d+)/.exec(e instanceof Error ? e.message : "");
    const where = pos ? lineColumnAt(text, Number(pos[1])) : undefined;
    throw corrupt(file, `${label} ${file} is not valid JSON: ${jsonSyntaxMessage(e, text)}`, where ?? {}, input);
  }
  // Before anything walks the value recursively (the schema, serialising).
  const deep = jsonDepthError(text, value, MAX_DATA_DEPTH);
  if (deep) {
    const where = { line: deep.line, column: deep.column, detail: DATA_TOO_DEEP_DETAIL };
    throw corrupt(file, `${label} ${file} is ${deep.summary}`, where, input);
  }
  if (isPlainObject(value) && typeof value.version === "number" && value.version > STATE_FORMAT_VERSION) {
    throw corrupt(
      file,
      `${label} ${file} has format version ${value.version}; converge ${TOOL_VERSION} ` +
        `understands version ${STATE_FORMAT_VERSION} — upgrade converge`,
      {},
      input,
    );
  }
  const errors = validate("state.schema.json", value);
  if (errors.length > 0) {
    throw corrupt(file, `${label} ${file} is not a valid converge state: ${describeErrors(errors)}`, {}, input);
  }
  const dup = duplicateAddress(value as State, text, file, input);
  if (dup) throw dup;
  return value as State;
}
