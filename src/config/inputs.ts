// Configuration inputs (the `config:` section): each input's value from, in order of precedence,
// --var, --var-file, CONVERGE_VAR_name, then its default. Pure: the shell reads the files and the
// environment (./var-files.ts) and passes the values here with where they came from, so every
// error names its source (the flag, file:line:column, the environment variable).
import { type Diagnostic, error, warning } from "../diagnostics/diagnostic.js";
import type { ConfigInput } from "../generated/schemas.js";
import { suggest } from "../diagnostics/did-you-mean.js";
import { errorAt, type SourceDocument } from "../yaml/source.js";
import { jsonNestsTooDeep, TOO_DEEP, TOO_DEEP_DETAIL } from "../yaml/yaml-limits.js";
import { pushAll } from "../base/arrays.js";
import { listed } from "../diagnostics/listed.js";

export type InputType = ConfigInput["type"];

/** Where a value came from. */
export type InputSource =
  | { kind: "flag"; flag: "--var"; name: string }
  | { kind: "file"; file: string; line: number; column: number }
  | { kind: "env"; variable: string }
  | { kind: "plan"; file: string };

/** One value given for an input. `text` values (--var, environment) are parsed by the declared
 *  type (lists and maps as JSON); file values are typed already. */
export interface InputValue {
  name: string;
  value: unknown;
  text: boolean;
  source: InputSource;
}

/** The values given, by kind; within a kind a later value wins over an earlier one. */
export interface GivenInputs {
  vars: InputValue[];
  files: InputValue[];
  env: InputValue[];
  /** The non-secret values a saved plan was made with (`apply FILE`): below every other source. */
  plan?: InputValue[];
  /** The problems of reading them (a --var without "=", a --var-file that does not parse or does
   *  not exist): the loader reports them with the stack's own diagnostics, in one run. */
  problems?: readonly Diagnostic[];
  /** Names given a value that could not be read (`--var env` without "="): that problem is the
   *  one said of them, not also "has no value". */
  unread?: readonly string[];
}

export const NO_INPUTS: GivenInputs = { vars: [], files: [], env: [] };

export interface ConfigDecl {
  name: string;
  type: InputType;
  description?: string;
  secret: boolean;
  /** The value in effect (undefined only when a required input has none). */
  value?: unknown;
  /** Where the value came from: "--var", "file.yaml:3:1", "CONVERGE_VAR_x" or "default". */
  from?: string;
}

export const ENV_PREFIX = "CONVERGE_VAR_";

/** How a source is named in messages. */
function sourceText(s: InputSource): string {
  if (s.kind === "flag") return `${s.flag} ${s.name}=…`;
  if (s.kind === "env") return s.variable;
  if (s.kind === "plan") return `the saved plan ${s.file}`;
  return `${s.file}:${s.line}:${s.column}`;
}

/** A diagnostic about a value, positioned at its source. */
function atSource(
  s: InputSource,
  summary: string,
  detail: string | undefined,
  code: string,
  severity: "error" | "warning" = "error",
): Diagnostic {
  const extra = {
    code,
    ...(detail ? { detail } : {}),
    ...(s.kind === "file" ? { file: s.file, line: s.line, column: s.column } : {}),
  };
  const where = s.kind === "file" ? "" : ` (from ${sourceText(s)})`;
  return severity === "error" ? error(summary + where, extra) : warning(summary + where, extra);
}

const typeName = (v: unknown): string =>
  Array.isArray(v) ? "a list" : v === null ? "null" : typeof v === "object" ? "a map" : `a ${typeof v}`;

/** Whether every number in `value` (a parsed JSON value) is finite. */
function allFinite(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "number" && !Number.isFinite(v)) return false;
    if (v !== null && typeof v === "object") pushAll(stack, Object.values(v));
  }
  return true;
}

/** The value as the declared type, or a message saying why it is not one. */
export function typedValue(type: InputType, value: unknown, text: boolean): { value: unknown } | { problem: string } {
  if (text && typeof value === "string") {
    if (type === "string") return { value };
    if (type === "number") {
      const n = Number(value);
      if (value.trim() === "" || Number.isNaN(n) || /inf/i.test(value))
        return { problem: `"${value}" is not a number` };
      return Number.isFinite(n) ? { value: n } : { problem: `"${value}" is a number out of range` };
    }
    if (type === "boolean")
      return value === "true"
        ? { value: true }
        : value === "false"
          ? { value: false }
          : { problem: `"${value}" is not a boolean (true or false)` };
    try {
      const parsed: unknown = JSON.parse(value);
      // JSON has no Infinity, but a literal too large for a double parses to it (1e400).
      if (!allFinite(parsed)) return { problem: `"${value}" holds a number out of range` };
      return typedValue(type, parsed, false);
    } catch {
      return {
        problem:
          `"${value}" is not JSON; a ${type} is given as JSON, e.g. ` +
          `${type === "list" ? '["a","b"]' : '{"k":"v"}'}`,
      };
    }
  }
  const ok =
    type === "list"
      ? Array.isArray(value)
      : type === "map"
        ? value !== null && typeof value === "object" && !Array.isArray(value)
        : typeof value === type && (type !== "number" || Number.isFinite(value));
  return ok ? { value } : { problem: `expected a ${type}, got ${typeName(value)}` };
}

/** The declarations of `config:` with their defaults checked (not yet their values). */
function declarations(
  src: SourceDocument,
  raw: Record<string, unknown>,
  badDefaults: Set<string>,
  diags: Diagnostic[],
): Map<string, ConfigDecl> {
  const decls = new Map<string, ConfigDecl>();
  for (const [name, v] of Object.entries(raw)) {
    if (!v || typeof v !== "object") continue;
    const d = v as Partial<ConfigInput>;
    if (!["string", "number", "boolean", "list", "map"].includes(String(d.type))) continue; // the schema said why
    const decl: ConfigDecl = {
      name,
      type: d.type!,
      secret: d.secret === true,
      ...(typeof d.description === "string" ? { description: d.description } : {}),
    };
    if (Object.hasOwn(d, "default")) {
      const t = typedValue(decl.type, d.default, false);
      if ("problem" in t) {
        diags.push({
          ...errorAt(src, ["config", name, "default"], `config.${name}: the default ${t.problem}`),
          code: "input/type",
        });
        badDefaults.add(name);
      } else Object.assign(decl, { value: t.value, from: "default" });
    }
    decls.set(name, decl);
  }
  return decls;
}

/** Unknown names in var files warned of one by one; the rest in one warning. */
const UNKNOWN_NAMED = 3;

/** Gives `decl` the value `v` if it is one of its type (else a diagnostic at its source). */
function assignGiven(v: InputValue, decl: ConfigDecl, diags: Diagnostic[]): void {
  if (
    v.text &&
    typeof v.value === "string" &&
    (decl.type === "list" || decl.type === "map") &&
    jsonNestsTooDeep(v.value)
  ) {
    // As deep as a --var-file may not be (yaml-limits.ts): refused before it is parsed.
    diags.push(atSource(v.source, `input "${v.name}": ${TOO_DEEP}`, TOO_DEEP_DETAIL, "input/depth"));
    return;
  }
  const t = typedValue(decl.type, v.value, v.text);
  if ("problem" in t) {
    // A secret's value is never quoted back, not even a wrong one.
    const problem = decl.secret ? `the value is not a ${decl.type}` : t.problem;
    diags.push(
      atSource(
        v.source,
        `input "${v.name}": ${problem}`,
        `config.${v.name} is declared with type: ${decl.type}.`,
        "input/type",
      ),
    );
    return;
  }
  Object.assign(decl, { value: t.value, from: sourceText(v.source) });
}

/**
 * The inputs with their values. A missing required input is an error at its declaration; a
 * value of the wrong type at the value's source; an unknown --var name is an error, an unknown
 * name in a --var-file a warning (files are often shared by stacks), CONVERGE_VAR_ of an
 * unknown name is ignored (the environment is shared by everything).
 */
export function resolveConfig(
  src: SourceDocument,
  raw: Record<string, unknown>,
  given: GivenInputs,
  diags: Diagnostic[],
): Map<string, ConfigDecl> {
  const tried = new Set<string>();
  const decls = declarations(src, raw, tried, diags);
  const names = [...decls.keys()];
  const unknownInFiles: string[] = [];
  // Lowest precedence first: each later value replaces the one before.
  for (const v of [...(given.plan ?? []), ...given.env, ...given.files, ...given.vars]) {
    const decl = decls.get(v.name);
    // A saved plan holds no secret: those are given again.
    if (v.source.kind === "plan" && (!decl || decl.secret)) continue;
    if (!decl) {
      if (v.source.kind === "env") continue;
      // A var file shared by several stacks: its keys for the others are named a few times, then counted.
      if (v.source.kind === "file" && unknownInFiles.push(v.name) > UNKNOWN_NAMED) continue;
      const guess = suggest(v.name, names);
      const detail = names.length
        ? `Inputs of this stack: ${names.join(", ")}.`
        : "This stack declares no inputs (a `config:` section).";
      diags.push(
        atSource(
          v.source,
          `unknown input "${v.name}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
          detail,
          "input/unknown",
          v.source.kind === "flag" ? "error" : "warning",
        ),
      );
      continue;
    }
    tried.add(v.name);
    assignGiven(v, decl, diags);
  }
  const more = unknownInFiles.slice(UNKNOWN_NAMED);
  if (more.length)
    diags.push(
      warning(
        `and ${more.length} more unknown input${more.length === 1 ? "" : "s"}` +
          ` in the --var-file files: ${listed(more, 10)}`,
        { code: "input/unknown" },
      ),
    );
  for (const name of given.unread ?? []) tried.add(name);
  for (const decl of decls.values()) {
    if (decl.value !== undefined || tried.has(decl.name)) continue; // a wrong value (or an unreadable one) was reported
    const d = errorAt(src, ["config", decl.name], `input "${decl.name}" has no value`, {
      key: true,
      detail:
        `Give it with --var ${decl.name}=VALUE, in a --var-file, or in the environment ` +
        `variable ${ENV_PREFIX}${decl.name}; or declare a default.`,
    });
    diags.push({ ...d, code: "input/missing" });
  }
  return decls;
}
