// The state file format (SPEC section 7): creating, parsing and serialising State documents.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { UserError, error, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { State } from "../generated/schemas.js";
import { describeErrors, validate } from "../schemas/index.js";
import { TOOL_VERSION } from "../version.js";

export const STATE_FORMAT_VERSION = 1;

/** {cwd}/state/{stackName}.json */
export function defaultStatePath(cwd: string, stackName: string): string {
  return join(cwd, "state", `${stackName}.json`);
}

/** An empty state for a stack that has never been applied: a fresh lineage, serial 0. */
export function newState(stack: string): State {
  return { version: 1, lineage: randomUUID(), serial: 0, stack, resources: [], outputs: {} };
}

// Keys in schema order; anything else (only possible inside free-form objects) is sorted.
const STATE_KEYS = ["version", "lineage", "serial", "stack", "resources", "outputs"];
const RESOURCE_KEYS = ["address", "type", "id", "inputs", "outputs", "dependencies", "protect"];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function ordered(obj: Record<string, unknown>, first: readonly string[], inner: (key: string, v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of first) if (Object.hasOwn(obj, k)) out[k] = inner(k, obj[k]);
  for (const k of Object.keys(obj).sort()) if (!first.includes(k)) out[k] = inner(k, obj[k]);
  return out;
}

function sortDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (isPlainObject(v)) return ordered(v, [], (_k, x) => sortDeep(x));
  return v;
}

/**
 * The on-disk text of a state: top-level and resource keys in schema order, every other object's
 * keys sorted, 2-space indent, trailing newline. Array order (resources, dependencies) is kept.
 */
export function serializeState(state: State): string {
  const top = ordered(state as unknown as Record<string, unknown>, STATE_KEYS, (k, v) =>
    k === "resources" && Array.isArray(v)
      ? v.map((r) => (isPlainObject(r) ? ordered(r, RESOURCE_KEYS, (_k, x) => sortDeep(x)) : sortDeep(r)))
      : sortDeep(v),
  );
  return JSON.stringify(top, null, 2) + "\n";
}

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

function corrupt(file: string, summary: string, where: Partial<Diagnostic> = {}): UserError {
  const backup = `${file}.backup`;
  const detail = file.endsWith(".backup")
    ? undefined
    : existsSync(backup)
      ? `The previous version of the state is kept in ${backup}. If ${file} cannot be repaired, ` +
        `inspect the backup and copy it over ${file} (it may be one write behind the cloud; run plan afterwards).`
      : `No backup (${backup}) exists.`;
  return new UserError(error(summary, { file, ...where, ...(detail ? { detail } : {}) }));
}

/**
 * Parses and validates the text of a state file. Anything wrong is a UserError naming the file
 * (and the .backup file when there is one).
 */
export function parseState(text: string, file: string): State {
  if (text.trim() === "") throw corrupt(file, `state file ${file} is empty`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const pos = /at position (\d+)/.exec(msg);
    const where = pos ? lineColumn(text, Number(pos[1])) : undefined;
    const at = where ? ` (line ${where.line}, column ${where.column})` : "";
    throw corrupt(file, `state file ${file} is not valid JSON${at}: ${msg}`, where ?? {});
  }
  if (isPlainObject(value) && typeof value.version === "number" && value.version > STATE_FORMAT_VERSION) {
    throw corrupt(
      file,
      `state file ${file} has format version ${value.version}; converge ${TOOL_VERSION} understands version ${STATE_FORMAT_VERSION} — upgrade converge`,
    );
  }
  const errors = validate("state.schema.json", value);
  if (errors.length > 0) {
    throw corrupt(file, `state file ${file} is not a valid converge state: ${describeErrors(errors)}`);
  }
  return value as State;
}
