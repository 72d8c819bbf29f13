// `${…}` interpolation: parsing templates and evaluating them against known and unknown values.
import { isSensitive, sensitive } from "./sensitive.js";
import { setOwn } from "../base/extended.js";
import { containsWhere } from "../base/contains.js";

export type Accessor = { kind: "prop"; name: string } | { kind: "index"; index: number };

export interface Reference {
  root: string;
  path: Accessor[];
  /** The text between `${` and `}` */
  text: string;
  /** Offset of `${` in the source string */
  offset: number;
}

export type TemplatePart = string | Reference;

export interface Template {
  parts: TemplatePart[];
  /** True when the string is exactly one `${…}`: the value is used as is (list, map, …). */
  whole: boolean;
}

export interface TemplateError {
  message: string;
  offset: number;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*/;

/** Parses a reference body such as `lake.labels["owner"]` or `things[0].name`. */
export function parseReference(text: string, offset = 0): Reference | TemplateError {
  const src = text.trim();
  const lead = text.length - text.trimStart().length;
  const root = IDENT.exec(src);
  if (!root)
    return {
      message: `"\${${text}}" is not a valid reference; expected a name such as \${lake.endpointUri}`,
      offset: offset + 2 + lead,
    };
  const path: Accessor[] = [];
  let i = root[0].length;
  while (i < src.length) {
    const c = src[i];
    if (c === ".") {
      const m = IDENT.exec(src.slice(i + 1));
      if (!m)
        return { message: `expected a property name after "." in "\${${text}}"`, offset: offset + 2 + lead + i + 1 };
      path.push({ kind: "prop", name: m[0] });
      i += 1 + m[0].length;
    } else if (c === "[") {
      const close = src.indexOf("]", i);
      if (close < 0) return { message: `unclosed "[" in "\${${text}}"`, offset: offset + 2 + lead + i };
      const inner = src.slice(i + 1, close).trim();
      if (/^\d+$/.test(inner)) path.push({ kind: "index", index: Number(inner) });
      else if (/^"([^"\\]|\\.)*"$/.test(inner)) path.push({ kind: "prop", name: JSON.parse(inner) as string });
      else
        return {
          message: `"[${inner}]" in "\${${text}}" must be a number or a "quoted" key`,
          offset: offset + 2 + lead + i,
        };
      i = close + 1;
    } else {
      return { message: `unexpected "${c}" in "\${${text}}"`, offset: offset + 2 + lead + i };
    }
  }
  return { root: root[0], path, text: src, offset };
}

export function isTemplateError(x: unknown): x is TemplateError {
  return typeof x === "object" && x !== null && "message" in x && !("root" in x) && !("parts" in x);
}

/** Parses a string with `${…}` interpolations; `$$` stands for a literal `$`. */
export function parseTemplate(s: string): Template | TemplateError {
  const parts: TemplatePart[] = [];
  let text = "";
  let i = 0;
  while (i < s.length) {
    if (s.startsWith("$$", i)) {
      text += "$";
      i += 2;
    } else if (s.startsWith("${", i)) {
      const close = s.indexOf("}", i + 2);
      if (close < 0) return { message: `unterminated "\${" (missing "}")`, offset: i };
      const body = s.slice(i + 2, close);
      if (body.trim() === "") return { message: `empty interpolation "\${}"`, offset: i };
      const ref = parseReference(body, i);
      if (isTemplateError(ref)) return ref;
      if (text) parts.push(text);
      text = "";
      parts.push(ref);
      i = close + 1;
    } else {
      text += s[i];
      i += 1;
    }
  }
  if (text) parts.push(text);
  return { parts, whole: parts.length === 1 && typeof parts[0] !== "string" };
}

/** How a stack writes the literal string `s`: every "$" doubled, so that none of it (a "${" or a
 *  "$$" in a live member or condition) is read as an interpolation or an escape. */
export function escapeLiteral(s: string): string {
  return s.replaceAll("$", () => "$$");
}

/** True when a string contains at least one interpolation (not just `$$` escapes). */
export function hasInterpolation(s: string): boolean {
  // Most strings have no "${" at all: a substring search, not the pattern, answers for them.
  return s.includes("${") && /(^|[^$])(\$\$)*\$\{/.test(s);
}

/** A value known only after apply. A single instance; carried through evaluation. */
export class Unknown {
  static readonly instance = new Unknown();
  private constructor() {}
  toJSON(): null {
    return null;
  }
}
export const UNKNOWN = Unknown.instance;

export function isUnknown(v: unknown): v is Unknown {
  return v === UNKNOWN;
}

/** Whether any part of a value is unknown. */
export function containsUnknown(v: unknown): boolean {
  return containsWhere(v, isUnknown);
}

/** Terraform's after_unknown: true where a value is unknown, mirrored structure elsewhere. */
export function unknownMask(v: unknown): unknown {
  if (isUnknown(v)) return true;
  if (Array.isArray(v)) return v.map(unknownMask);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = Object.create(null); // any key, __proto__ too
    for (const [k, x] of Object.entries(v)) {
      const m = unknownMask(x);
      if (m !== false && !(typeof m === "object" && m !== null && Object.keys(m).length === 0 && !Array.isArray(m)))
        out[k] = m;
    }
    return out;
  }
  return false;
}

/** Replaces unknowns by null (for JSON). */
export function stripUnknown(v: unknown): unknown {
  if (isUnknown(v)) return null;
  if (Array.isArray(v)) return v.map(stripUnknown);
  if (v && typeof v === "object") {
    // As Object.fromEntries(Object.entries(v)…) made it, without the pairs (a plan of 100,000
    // resources strips 200,000 values): the same keys in the same order, "__proto__" an own key.
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      setOwn(out, k, stripUnknown((v as Record<string, unknown>)[k]));
    }
    return out;
  }
  return v;
}

export type AccessResult = { ok: true; value: unknown } | { ok: false; message: string };

/** Follows accessors into a value; unknown stays unknown. */
export function access(value: unknown, path: readonly Accessor[], describe: string): AccessResult {
  let cur = value;
  let where = describe;
  // A field of a secret is secret.
  let secret = false;
  for (const a of path) {
    if (isSensitive(cur)) [secret, cur] = [true, cur.value];
    if (isUnknown(cur)) return { ok: true, value: UNKNOWN };
    if (a.kind === "index") {
      if (!Array.isArray(cur)) {
        // A map takes a number index as the key of its text, as Terraform does (`nums[1]`: the
        // forEach instance keyed 1, which planning reads as the map of instances by key).
        const key = String(a.index);
        if (cur !== null && typeof cur === "object" && Object.hasOwn(cur, key)) {
          cur = (cur as Record<string, unknown>)[key];
          where += `[${a.index}]`;
          continue;
        }
        if (cur === null || typeof cur !== "object")
          return { ok: false, message: `${where} is not a list, so [${a.index}] cannot be taken` };
        const keys = Object.keys(cur);
        return {
          ok: false,
          message:
            `${where} is not a list and has no key "${key}"` +
            `${keys.length ? `; it has ${keys.slice(0, 12).join(", ")}` : ""}`,
        };
      }
      if (a.index >= cur.length)
        return { ok: false, message: `${where} has ${cur.length} element(s); [${a.index}] is out of range` };
      cur = cur[a.index];
      where += `[${a.index}]`;
    } else {
      if (cur === null || typeof cur !== "object" || Array.isArray(cur))
        return { ok: false, message: `${where} is not an object, so "${a.name}" cannot be read` };
      const obj = cur as Record<string, unknown>;
      if (!Object.hasOwn(obj, a.name)) {
        const keys = Object.keys(obj);
        return {
          ok: false,
          message: `${where} has no field "${a.name}"${keys.length ? `; it has ${keys.slice(0, 12).join(", ")}` : ""}`,
        };
      }
      cur = obj[a.name];
      where += `.${a.name}`;
    }
  }
  return { ok: true, value: secret ? sensitive(cur) : cur };
}

/** Renders a reference back to source form. */
export function formatReference(ref: Pick<Reference, "root" | "path">): string {
  return (
    ref.root +
    ref.path
      .map((a) =>
        a.kind === "index"
          ? `[${a.index}]`
          : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(a.name)
            ? `.${a.name}`
            : `[${JSON.stringify(a.name)}]`,
      )
      .join("")
  );
}
