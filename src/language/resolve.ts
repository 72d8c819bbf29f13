// Evaluates raw stack values: `${…}` interpolations against a scope of known (or unknown) values.
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import {
  UNKNOWN,
  access,
  containsUnknown,
  hasInterpolation,
  isTemplateError,
  isUnknown,
  parseTemplate,
} from "./expressions.js";
import type { Reference } from "./expressions.js";
import { splitAddress } from "./addresses.js";
import { containsSensitive, isSensitive, plain, sensitive } from "./sensitive.js";
import { evaluateCall, type FunctionCall, functionCall, PROGRAM_APPLY } from "./functions.js";
import { type DocPath, errorAt, formatPath, type SourceDocument } from "../yaml/source.js";
import { valueTooDeep } from "../diagnostics/nesting.js";
import { MAX_DEPTH, TOO_DEEP, TOO_DEEP_DETAIL } from "../yaml/yaml-limits.js";

/** Values that references can reach, by root name. `undefined` = not in scope. */
export type Scope = (root: string) => { value: unknown } | undefined;

/** The scope of a map of values by name (or address). A forEach's name, which has no value of its
 *  own, is the map of its instances' values by key: `${viewers["sre"].etag}`. */
export function valuesScope(values: ReadonlyMap<string, unknown>): Scope {
  return (root) => {
    if (values.has(root)) return { value: values.get(root) };
    let instances: Record<string, unknown> | undefined;
    for (const [address, value] of values) {
      if (!address.startsWith(`${root}[`)) continue;
      const { name, index } = splitAddress(address);
      if (name === root && index !== undefined)
        (instances ??= Object.create(null) as Record<string, unknown>)[String(index)] = value;
    }
    return instances ? { value: instances } : undefined;
  };
}

function scalarText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/**
 * Resolves `raw` (a value from the stack at document path `at`). Strings that are exactly one
 * interpolation take the referenced value as is; other strings concatenate scalars. Unknown
 * values stay unknown (a string with any unknown part is unknown as a whole).
 */
export function resolveValue(
  raw: unknown,
  at: DocPath,
  scope: Scope,
  src: SourceDocument | undefined,
  diags: Diagnostic[],
): unknown {
  if (typeof raw === "string") {
    if (!hasInterpolation(raw)) return raw.replace(/\$\$/g, "$");
    const t = parseTemplate(raw);
    if (isTemplateError(t)) {
      diags.push(located(src, at, `bad interpolation: ${t.message}`, t.offset));
      return UNKNOWN;
    }
    const values: unknown[] = [];
    for (const part of t.parts) {
      if (typeof part === "string") {
        values.push(part);
        continue;
      }
      const root = scope(part.root);
      if (!root) {
        diags.push(located(src, at, `undefined reference "\${${part.text}}"`, part.offset));
        return UNKNOWN;
      }
      const r = access(root.value, part.path, part.root);
      if (!r.ok) {
        diags.push(located(src, at, `cannot evaluate "\${${part.text}}": ${r.message}`, part.offset));
        return UNKNOWN;
      }
      values.push(r.value);
    }
    if (t.whole) {
      const deep = resolvedTooDeep(src, at, values[0], t.parts[0] as Reference);
      if (deep) diags.push(deep);
      return deep ? UNKNOWN : values[0];
    }
    // A string with a secret part is secret as a whole.
    const secret = values.some(isSensitive);
    const plainValues = values.map((v) => (isSensitive(v) ? v.value : v));
    if (plainValues.some(isUnknown)) return UNKNOWN;
    let out = "";
    for (const [i, v] of plainValues.entries()) {
      const s = scalarText(v);
      if (s === undefined) {
        const part = t.parts[i];
        const ref = typeof part === "string" ? undefined : part;
        diags.push(
          located(
            src,
            at,
            `"\${${ref?.text ?? "?"}}" is ` +
              `${Array.isArray(v) ? "a list" : v === null ? "null" : "a map"} and cannot ` +
              `be part of a string`,
            ref?.offset ?? 0,
          ),
        );
        return UNKNOWN;
      }
      out += s;
    }
    return secret ? sensitive(out) : out;
  }
  if (Array.isArray(raw)) return raw.map((v, i) => resolveValue(v, [...at, i], scope, src, diags));
  const call = functionCall(raw);
  if (call) return callValue(call, at, scope, src, diags);
  if (raw && typeof raw === "object") {
    const out: Record<string, unknown> = Object.create(null); // any key, __proto__ too
    for (const [k, v] of Object.entries(raw)) out[k] = resolveValue(v, [...at, k], scope, src, diags);
    return out;
  }
  return raw;
}

/** Whether a value as written holds an fn::secret (its result secret even while it is unknown). */
function secretCall(raw: unknown): boolean {
  if (Array.isArray(raw)) return raw.some(secretCall);
  if (raw === null || typeof raw !== "object") return false;
  return functionCall(raw)?.key === "fn::secret" || Object.values(raw).some(secretCall);
}

/** A function call: its arguments resolved, then evaluated (unknown while an argument is). */
function callValue(
  call: FunctionCall,
  at: DocPath,
  scope: Scope,
  src: SourceDocument | undefined,
  diags: Diagnostic[],
): unknown {
  const where = [...at, call.key];
  const args = resolveValue(call.args, where, scope, src, diags);
  // A program's function run during apply: known after apply (secret when its source is).
  if (call.key === PROGRAM_APPLY) {
    return containsSensitive(args) || secretCall(call.args) ? sensitive(UNKNOWN) : UNKNOWN;
  }
  if (containsUnknown(args)) return UNKNOWN;
  const r = evaluateCall(call.key, plain(args));
  if (r.ok) return call.key === "fn::secret" || containsSensitive(args) ? sensitive(r.value) : r.value;
  const path = [...where, ...r.path];
  const text = `${formatPath(at)}: ${r.message}`;
  diags.push(
    src ? errorAt(src, path, text, r.detail ? { detail: r.detail } : {}) : error(text, { path: formatPath(path) }),
  );
  return UNKNOWN;
}

function located(src: SourceDocument | undefined, at: DocPath, summary: string, offset: number): Diagnostic {
  const text = `${formatPath(at)}: ${summary}`;
  return src ? errorAt(src, at, text, { offset }) : error(text, { path: formatPath(at) });
}

/**
 * An error when the value `${ref}` gives (`value`) would nest the document more than MAX_DEPTH
 * levels deep at `at`, where the string that is only that reference stands: references can
 * build a value deeper than any written (a list of a list of a variable…), and a plan or state
 * holding it would be refused when read back (../diagnostics/nesting.ts).
 */
export function resolvedTooDeep(
  src: SourceDocument | undefined,
  at: DocPath,
  value: unknown,
  ref: { text: string; offset: number },
): Diagnostic | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const room = MAX_DEPTH - at.length;
  // Counted again without the Sensitive wrappers (no level of the value) only when too deep with them.
  if (!valueTooDeep(value, room) || !valueTooDeep(plain(value), room)) return undefined;
  const summary = `${TOO_DEEP} once "\${${ref.text}}" is resolved`;
  const detail = TOO_DEEP_DETAIL;
  if (!src) return error(summary, { path: formatPath(at), detail });
  return errorAt(src, at, summary, { offset: ref.offset, detail });
}
