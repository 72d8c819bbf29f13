// Schema validation errors (ajv) as stack diagnostics: file:line:column, the document path, and a
// message that says what is wrong in the stack's terms.
import type { ErrorObject } from "ajv";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { hasInterpolation } from "../language/expressions.js";
import { functionCall } from "../language/functions.js";
import { suggest } from "../diagnostics/did-you-mean.js";
import { type DocPath, errorAt as at, formatPath, type SourceDocument } from "../yaml/source.js";

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "list";
  if (typeof v === "object") return "map";
  return typeof v;
}

/** A value for a message: strings quoted and escaped (a NUL or a newline shows as \u0000, \n). */
const shown = (v: unknown) => (typeof v === "string" ? JSON.stringify(v) : `"${String(v)}"`);

/** The value at `path` (own properties only: a path never leads into Object.prototype). */
export function valueAt(root: unknown, path: DocPath): unknown {
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

function toDocPath(root: unknown, instancePath: string): DocPath {
  if (!instancePath) return [];
  const out: (string | number)[] = [];
  let cur = root;
  for (const raw of instancePath.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const key: string | number = Array.isArray(cur) && /^\d+$/.test(seg) ? Number(seg) : seg;
    out.push(key);
    cur = valueAt(cur, [key]);
  }
  return out;
}

/**
 * Whether the value at `path` has its `${…}` resolved before use (variable values, invoke
 * arguments, resource properties, outputs). Everything else (the stack name, provider, types,
 * options, lint) is used as written, so its schema checks apply to the text as it is.
 */
function isResolvedPath(path: DocPath): boolean {
  const [top, , third, fourth] = path;
  if (path.length < 2) return false;
  if (top === "outputs") return true;
  if (top === "resources") return third === "properties";
  if (top === "variables") return third !== "fn::invoke" || fourth === "arguments";
  return false;
}

/** The message of one schema error at `path`. */
function describe(src: SourceDocument, e: ErrorObject, path: DocPath, value: unknown): Diagnostic {
  const where = formatPath(path) || "the stack";
  switch (e.keyword) {
    case "required":
      return at(
        src,
        path,
        `${where}: missing required property "${(e.params as { missingProperty: string }).missingProperty}"`,
      );
    case "additionalProperties": {
      const prop = (e.params as { additionalProperty: string }).additionalProperty;
      // A property the type deliberately lacks says why (`x-absentProperties` in its schema).
      const parent = e.parentSchema as { "x-absentProperties"?: Record<string, string> } | undefined;
      const why = parent?.["x-absentProperties"];
      if (why && Object.hasOwn(why, prop)) {
        const summary = `${where}: "${prop}" is not a property of this type`;
        return at(src, [...path, prop], summary, { key: true, detail: why[prop] });
      }
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const guess = suggest(prop, known);
      const hint = guess ? ` (did you mean "${guess}"?)` : "";
      return at(src, [...path, prop], `${where}: unknown property "${prop}"${hint}`, {
        key: true,
        detail: known.length ? `Expected one of: ${known.join(", ")}.` : undefined,
      });
    }
    case "type":
      return at(src, path, `${where}: expected ${(e.params as { type: string }).type}, got ${typeOf(value)}`);
    case "enum":
      return at(src, path, `${where}: ${shown(value)} is not allowed`, {
        detail: `Expected one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(", ")}.`,
      });
    case "minLength":
      return at(src, path, `${where}: must not be empty`);
    case "pattern": {
      const desc = (e.parentSchema as { description?: string } | undefined)?.description;
      return at(
        src,
        path,
        `${where}: ${shown(value)} is not of the expected form: it must ` +
          `match ${(e.params as { pattern: string }).pattern}`,
        desc ? { detail: desc } : {},
      );
    }
    case "propertyNames": {
      const name = (e.params as { propertyName: string }).propertyName;
      return at(src, [...path, name], `${where}: ${shown(name)} is not a valid name`, {
        key: true,
        detail: "Names start with a letter or _ and contain letters, digits, _ and -.",
      });
    }
    case "const":
      return at(src, path, `${where}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`);
    default:
      return at(src, path, `${where}: ${e.message ?? "is invalid"}`);
  }
}

const DEFERRED_KEYWORDS = new Set(["type", "minLength", "pattern", "enum", "format"]);

/** Whether the value at `path`, or one around it, is a function call. */
function withinCall(root: unknown, path: DocPath): boolean {
  let cur = root;
  for (let i = 0; i <= path.length; i++) {
    // A variable's whole fn::invoke declares a data source, whose arguments have a schema of their
    // own, checked now; the value functions (fn::join…) are checked once evaluated.
    const call = functionCall(cur);
    const declaration = call?.key === "fn::invoke" && i === 2 && path[0] === "variables";
    if (call && !declaration) return true;
    if (i < path.length) cur = valueAt(cur, [path[i]!]);
  }
  return false;
}

/** Translates ajv errors into diagnostics; errors on interpolated values wait for resolution. */
export function schemaDiagnostics(
  src: SourceDocument,
  root: unknown,
  errors: readonly ErrorObject[],
  base: DocPath = [],
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword === "if" || e.keyword === "allOf") continue;
    // Errors inside propertyNames (e.g. its pattern) are reported once, by the propertyNames error.
    if (e.keyword !== "propertyNames" && (e as { propertyName?: string }).propertyName !== undefined) continue;
    const path = [...base, ...toDocPath(valueAt(root, base), e.instancePath)];
    const value = valueAt(root, path);
    if (
      typeof value === "string" &&
      hasInterpolation(value) &&
      DEFERRED_KEYWORDS.has(e.keyword) &&
      isResolvedPath(path)
    )
      continue;
    // A function call (fn::join…) is checked once it is evaluated, as is everything inside it.
    if (isResolvedPath(path) && withinCall(root, path)) continue;
    // The resource type enum gets its own message with a suggestion.
    if (e.keyword === "enum" && path.length === 3 && path[0] === "resources" && path[2] === "type") continue;
    const d = describe(src, e, path, value);
    const key = `${d.line}:${d.column}:${d.summary}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  }
  return out;
}

/** The error of a resource's resolved property that its type's schema refuses (`e`, found in the
 *  properties at `["resources", decl, "properties"]`): one form for the loader and the plan. */
export function propertySchemaDiagnostic(
  src: SourceDocument,
  address: string,
  decl: string,
  e: ErrorObject,
): Diagnostic {
  const p: DocPath = [
    "resources",
    decl,
    "properties",
    ...e.instancePath
      .split("/")
      .filter(Boolean)
      .map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
  ];
  return at(src, p, `${address}: ${formatPath(p.slice(2))} ${e.message}`, { address });
}
