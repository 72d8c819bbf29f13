// `options.forEach`: one resource declaration, one instance per element of a list or map. The
// collection must be known when the stack loads (a literal, config inputs, variables built from
// them); each instance is addressed `name["key"]` (the element when it is a string, else its
// index: `name[0]`) and its `${each.key}` / `${each.value}` are replaced by its own values, so
// that from then on an instance is a resource like any other.
import { type Diagnostic } from "../diagnostics/diagnostic.js";
import {
  UNKNOWN,
  access,
  containsUnknown,
  escapeLiteral,
  isTemplateError,
  parseTemplate,
} from "../language/expressions.js";
import type { Each, VariableDecl } from "./model.js";
import type { ConfigDecl } from "./inputs.js";
import { type Scope, resolveValue } from "../language/resolve.js";
import { plain, secretStrings, sensitive } from "../language/sensitive.js";
import { type DocPath, errorAt as at, formatPath, type SourceDocument } from "../yaml/source.js";
import { pushAll } from "../base/arrays.js";

/** What a forEach expression may read when the stack loads: inputs and variables built from
 *  them (not resources, not data sources: those are known only while planning). A secret
 *  input is sensitive here as while planning, so that what is computed from it is known secret. */
export function loadTimeScope(
  src: SourceDocument,
  config: ReadonlyMap<string, ConfigDecl>,
  variables: ReadonlyMap<string, VariableDecl>,
): Scope {
  const visiting = new Set<string>();
  const scope: Scope = (root) => {
    const c = config.get(root);
    if (c) return { value: c.value === undefined ? UNKNOWN : c.secret ? sensitive(c.value) : c.value };
    const v = variables.get(root);
    if (!v || v.invoke || visiting.has(root)) return undefined;
    visiting.add(root);
    const value = resolveValue(v.value, ["variables", root], scope, src, []);
    visiting.delete(root);
    return { value };
  };
  return scope;
}

/**
 * The instances of a resource with `options.forEach` (at `path`), or undefined after reporting
 * why there are none. `lenient`: a collection that waits on an input without a value makes no
 * instances and no error (commands that use only the stack's name). The strings of a collection
 * computed from a secret (its keys, its instances' addresses) are added to `secrets`.
 */
export function forEachInstances(
  src: SourceDocument,
  raw: unknown,
  path: DocPath,
  scope: Scope,
  lenient: boolean,
  diags: Diagnostic[],
  secrets: Set<string>,
): Each[] | undefined {
  const found: Diagnostic[] = [];
  const resolved = resolveValue(raw, path, (root) => scope(root) ?? { value: UNKNOWN }, src, found);
  if (found.length) return void pushAll(diags, found);
  if (containsUnknown(resolved)) {
    if (!lenient)
      diags.push(
        at(src, path, `${formatPath(path)}: must be known when the stack loads`, {
          detail:
            "forEach may use literals, config inputs and variables built from them; " +
            "not resource outputs or data sources (fn::invoke).",
        }),
      );
    return undefined;
  }
  secretStrings(resolved, secrets);
  const value = plain(resolved);
  if (Array.isArray(value)) {
    const seen = new Set<string>();
    const out: Each[] = [];
    for (const [i, v] of value.entries()) {
      if (typeof v === "string" && seen.has(v))
        return void diags.push(
          at(src, path, `${formatPath(path)}: "${v}" is in the list twice`, {
            detail: "Each string names an instance, so each must be unique.",
          }),
        );
      if (typeof v === "string") seen.add(v);
      out.push({ key: typeof v === "string" ? v : i, value: v });
    }
    return out;
  }
  if (value && typeof value === "object") return Object.entries(value).map(([key, v]) => ({ key, value: v }));
  diags.push(
    at(src, path, `${formatPath(path)}: expected a list or a map, got ${value === null ? "null" : typeof value}`),
  );
  return undefined;
}

/** Doubles every "$" of every string in a value (so it reads back as the literal it is). */
function escapeDeep(v: unknown): unknown {
  if (typeof v === "string") return escapeLiteral(v);
  if (Array.isArray(v)) return v.map(escapeDeep);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, escapeDeep(x)]));
  return v;
}

/** One string with `${each.…}` replaced; other interpolations stay as written. */
function substituteString(s: string, each: Each, path: DocPath, src: SourceDocument, diags: Diagnostic[]): unknown {
  if (!s.includes("${")) return s;
  const t = parseTemplate(s);
  if (isTemplateError(t) || !t.parts.some((p) => typeof p !== "string" && p.root === "each")) return s;
  let out = "";
  for (const part of t.parts) {
    if (typeof part === "string") {
      out += escapeLiteral(part);
      continue;
    }
    if (part.root !== "each") {
      out += `\${${part.text}}`;
      continue;
    }
    const r = access(each, part.path, "each");
    const bad = !r.ok
      ? r.message
      : part.path.length === 0
        ? "each is a map of key and value; write each.key or each.value"
        : undefined;
    if (bad) {
      diags.push(
        at(src, path, `${formatPath(path)}: cannot evaluate "\${${part.text}}": ${bad}`, { offset: part.offset }),
      );
      return s;
    }
    if (t.whole) return escapeDeep((r as { value: unknown }).value);
    const v = (r as { value: unknown }).value;
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      diags.push(
        at(
          src,
          path,
          `${formatPath(path)}: "\${${part.text}}" is ` +
            `${Array.isArray(v) ? "a list" : "a map"} and cannot be part of a string`,
          { offset: part.offset },
        ),
      );
      return s;
    }
    out += escapeLiteral(String(v));
  }
  return out;
}

/** A value with every `${each.key}` / `${each.value}` replaced by the instance's own. */
export function substituteEach(
  v: unknown,
  each: Each,
  path: DocPath,
  src: SourceDocument,
  diags: Diagnostic[],
): unknown {
  if (typeof v === "string") return substituteString(v, each, path, src, diags);
  if (Array.isArray(v)) return v.map((x, i) => substituteEach(x, each, [...path, i], src, diags));
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = Object.create(null); // any key, __proto__ too
    for (const [k, x] of Object.entries(v)) out[k] = substituteEach(x, each, [...path, k], src, diags);
    return out;
  }
  return v;
}
