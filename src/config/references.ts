// `${…}` references in a stack: found with their positions when it loads, then checked against
// the declared names, and turned into the dependency graph.
import { type Diagnostic } from "../diagnostics/diagnostic.js";
import { Graph } from "../graph/graph.js";
import { type Accessor, hasInterpolation, isTemplateError, parseTemplate } from "../language/expressions.js";
import { instanceAddress } from "../language/addresses.js";
import type { ForEachInstances } from "./model.js";
import type { LocatedReference, ResourceDecl, VariableDecl, OutputDecl } from "./model.js";
import { functionCall, PROGRAM_APPLY, staticCallProblem } from "../language/functions.js";
import { ProgramSource } from "./program-source.js";
import { suggest } from "../diagnostics/did-you-mean.js";
import { type DocPath, errorAt as at, formatPath, type SourceDocument } from "../yaml/source.js";

/** Walks a raw value, calling `fn` for every string with its path. */
function eachString(value: unknown, path: DocPath, fn: (s: string, path: DocPath) => void): void {
  if (typeof value === "string") fn(value, path);
  else if (Array.isArray(value)) value.forEach((v, i) => eachString(v, [...path, i], fn));
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) eachString(v, [...path, k], fn);
}

// What a value holds, found in one walk that allocates nothing (the loader asks for every
// resource whether its properties hold a call, a "${" and an interpolation).
const CALL = 1;
const DOLLAR_BRACE = 2;
const INTERPOLATION = 4;

/** Whether `v` is a function call: a map whose only own enumerable key starts with "fn::"
 *  (functionCall's test, without building the list of keys). */
function isCallMap(v: object): boolean {
  let only: string | undefined;
  let count = 0;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (++count > 1) return false;
    only = k;
  }
  return count === 1 && only!.startsWith("fn::");
}

function stringFlags(s: string): number {
  if (!s.includes("${")) return 0;
  return hasInterpolation(s) ? DOLLAR_BRACE | INTERPOLATION : DOLLAR_BRACE;
}

/** The CALL, DOLLAR_BRACE and INTERPOLATION flags of a value and everything in it. */
function scan(value: unknown): number {
  if (typeof value === "string") return stringFlags(value);
  if (value === null || typeof value !== "object") return 0;
  let flags = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (i in value) flags |= scan(value[i]);
  } else {
    if (isCallMap(value)) flags |= CALL;
    for (const k in value) if (Object.hasOwn(value, k)) flags |= scan((value as Record<string, unknown>)[k]);
  }
  return flags;
}

/** Whether `value` holds no `${…}` at all. */
export function isLiteral(value: unknown): boolean {
  return (scan(value) & (INTERPOLATION | CALL)) === 0;
}

/** Whether `value` holds a function call (fn::join…) anywhere. */
export function hasCall(value: unknown): boolean {
  return (scan(value) & CALL) !== 0;
}

/** Function calls with a wrong shape (unknown, fn::invoke out of place, wrong arity). */
function checkCalls(src: SourceDocument, value: unknown, path: DocPath, diags: Diagnostic[]): void {
  const call = functionCall(value);
  if (call) {
    const programApply = call.key === PROGRAM_APPLY && src instanceof ProgramSource && path[0] === "outputs";
    const p = programApply ? undefined : staticCallProblem(call);
    if (p)
      diags.push(
        at(src, [...path, call.key, ...p.path], `${formatPath(path)}: ${p.message}`, {
          key: p.path.length === 0,
          ...(p.detail ? { detail: p.detail } : {}),
        }),
      );
    return checkCalls(src, call.args, [...path, call.key], diags);
  }
  if (Array.isArray(value)) value.forEach((v, i) => checkCalls(src, v, [...path, i], diags));
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) checkCalls(src, v, [...path, k], diags);
}

/** The references in `value` (at `path`); a malformed interpolation is a diagnostic. */
export function collectRefs(
  src: SourceDocument,
  value: unknown,
  path: DocPath,
  diags: Diagnostic[],
): LocatedReference[] {
  const refs: LocatedReference[] = [];
  const flags = scan(value);
  if (flags & CALL) checkCalls(src, value, path, diags);
  // Most values have no interpolation: skip the walk that builds a path for every string.
  if (!(flags & DOLLAR_BRACE)) return refs;
  eachString(value, path, (s, p) => {
    if (!s.includes("${")) return;
    const t = parseTemplate(s);
    if (isTemplateError(t)) {
      diags.push(
        at(src, p, `${formatPath(p)}: bad interpolation: ${t.message}`, {
          offset: t.offset,
          detail: 'Interpolations look like ${name} or ${name.field[0]}; write $$ for a literal "$".',
        }),
      );
      return;
    }
    for (const part of t.parts) if (typeof part !== "string") refs.push({ ...part, at: p });
  });
  return refs;
}

/** The names written in a stack: asked one by one, listed only for a suggestion. */
export interface DeclaredNames {
  has(name: string): boolean;
  /** In order, each once */
  list(): string[];
}

export interface Declared {
  variables: Map<string, VariableDecl>;
  resources: Map<string, ResourceDecl>;
  outputs: Map<string, OutputDecl>;
  /** Every input, variable and resource name written in the stack, loaded or not (own keys only) */
  names: DeclaredNames;
  /** The instances of each forEach whose collection is known when the stack loads */
  instances?: ReadonlyMap<string, ForEachInstances>;
}

const keyText = (k: string | number): string => (typeof k === "number" ? String(k) : JSON.stringify(k));

/** What is wrong with `${root…}` where root is a forEach with these instances; undefined: nothing.
 *  (While planning, a forEach's name is the map of its instances' values by key: see valuesScope.) */
function instanceProblem(root: string, f: ForEachInstances, path: readonly Accessor[]): string | undefined {
  const [first, field] = path;
  if (!first) return undefined;
  const shown = f.keys.slice(0, 12).map(keyText).join(", ") + (f.keys.length > 12 ? ", …" : "");
  const listed = f.keys.length ? `its instances are ${shown}` : "it has no instances";
  // A number index names the instance whose key is its text (Terraform's conversion): nums[1] is
  // the instance of address nums[1], and ports[8080] the one keyed "8080".
  const key = first.kind === "index" ? String(first.index) : first.name;
  const found = f.keys.some((k) => String(k) === key);
  if (first.kind === "index" && !found) return `${root} has no instance ${first.index}; ${listed}`;
  if (first.kind === "prop" && !found) {
    if (f.fields.includes(first.name))
      return f.keys.length
        ? `${root} is a forEach resource: name one instance, e.g. ${instanceAddress(root, f.keys[0]!)}`
        : `${root} is a forEach resource with no instances: it has no field "${first.name}"`;
    return `${root} has no instance "${first.name}"; ${listed}`;
  }
  if (field?.kind === "prop" && !f.fields.includes(field.name))
    return `${root}[${first.kind === "index" ? first.index : keyText(key)}] has no field "${field.name}"`;
  return undefined;
}

/** Checks one reference (diagnostics into `diags`); whether it makes an edge of the graph. */
function checkReference(
  src: SourceDocument,
  d: Declared,
  r: LocatedReference,
  fromDecl: string | undefined,
  allNames: () => string[],
  diags: Diagnostic[],
): boolean {
  if (!d.names.has(r.root)) {
    const guess = suggest(r.root, allNames());
    diags.push(
      at(
        src,
        r.at,
        `undefined reference "\${${r.text}}": no variable or resource is named "` +
          `${r.root}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
        { offset: r.offset },
      ),
    );
    return false;
  }
  if (r.root === fromDecl) {
    diags.push(at(src, r.at, `"${fromDecl}" refers to itself in "\${${r.text}}"`, { offset: r.offset }));
    return false;
  }
  const forEach = d.instances?.get(r.root);
  const wrong = forEach && instanceProblem(r.root, forEach, r.path);
  if (wrong) {
    diags.push(
      at(src, r.at, `"\${${r.text}}": ${wrong}`, {
        offset: r.offset,
        ...(forEach.fields.length ? { detail: `Fields of an instance: ${forEach.fields.join(", ")}.` } : {}),
      }),
    );
    return false;
  }
  const first = r.path[0];
  const fields = d.resources.get(r.root)?.driver.outputNames ?? d.variables.get(r.root)?.invoke?.driver.resultNames;
  if (fields && first?.kind === "prop" && !fields.includes(first.name)) {
    diags.push(
      at(src, r.at, `"\${${r.text}}": ${r.root} has no field "${first.name}"`, {
        offset: r.offset,
        detail: `Fields: ${fields.join(", ")}.`,
      }),
    );
  }
  return true;
}

/**
 * Checks every reference and dependsOn entry against the declared names and builds the graph of
 * variables and resources. Names are looked up in Maps and Sets only, so "${toString}" or
 * "${constructor}" is an undefined reference like any other absent name.
 */
export function referenceGraph(src: SourceDocument, d: Declared, diags: Diagnostic[]): Graph {
  const graph = new Graph();
  // Listed only when a name is not found (for a suggestion).
  let listed: string[] | undefined;
  const allNames = () => (listed ??= d.names.list());
  for (const n of d.variables.keys()) graph.addNode(n);
  for (const n of d.resources.keys()) graph.addNode(n);
  // A forEach's name stands for all its instances.
  const instances = new Map<string, string[]>();
  for (const r of d.resources.values()) if (r.each) instances.set(r.decl, [...(instances.get(r.decl) ?? []), r.name]);
  const addEdges = (from: string, to: string) => {
    if (graph.has(to)) graph.addEdge(from, to);
    else for (const i of instances.get(to) ?? []) graph.addEdge(from, i);
  };
  const checkRefs = (from: string | undefined, refs: LocatedReference[], fromDecl = from) => {
    for (const r of refs) if (checkReference(src, d, r, fromDecl, allNames, diags) && from) addEdges(from, r.root);
  };
  for (const v of d.variables.values()) checkRefs(v.name, v.refs);
  for (const r of d.resources.values()) {
    checkRefs(r.name, r.refs, r.decl);
    r.options.dependsOn.forEach((dep, i) => {
      const path = ["resources", r.decl, "options", "dependsOn", i];
      if (dep === r.decl) diags.push(at(src, path, `${r.decl} depends on itself`, { address: r.name }));
      else if (d.resources.has(dep) || d.variables.has(dep) || instances.has(dep)) addEdges(r.name, dep);
      else if (!d.names.has(dep)) {
        const guess = suggest(
          dep,
          allNames().filter((n) => n !== r.name),
        );
        diags.push(
          at(
            src,
            path,
            `${r.name}: dependsOn names "${dep}", which is not a resource${guess ? ` (did you mean "${guess}"?)` : ""}`,
            { address: r.name },
          ),
        );
      }
    });
  }
  for (const o of d.outputs.values()) checkRefs(undefined, o.refs);
  return graph;
}
