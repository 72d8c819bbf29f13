// Stack loading: YAML with positions → schema validation → static semantic checks. Every problem
// becomes a diagnostic with file:line:column and the document path; nothing touches the network.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { closest, distance } from "fastest-levenshtein";
import type { ErrorObject } from "ajv";
import { validate } from "../schemas/index.js";
import { type Diagnostic, error, hasErrors } from "../diagnostics/diagnostic.js";
import { lintStack } from "./lint.js";
import { functionDriver, resourceDriver, suggestToken, RESOURCE_TOKENS, FUNCTION_TOKENS } from "../drivers/registry.js";
import { Graph } from "../graph/graph.js";
import { hasInterpolation, isTemplateError, parseTemplate } from "./expressions.js";
import type { LocatedReference, OutputDecl, ResourceDecl, StackModel, VariableDecl } from "./model.js";
import { type DocPath, errorAt as at, formatPath, SourceDocument } from "./source.js";

export interface LoadResult {
  stack?: StackModel;
  diagnostics: Diagnostic[];
}

export interface LoadOptions {
  /** Lint warnings become errors */
  strict?: boolean;
  /** "Now" for expired-condition checks (tests) */
  now?: Date;
}

/** Reads and loads a stack file (the only I/O of loading). */
export function loadStackFile(path: string, opts: LoadOptions = {}): LoadResult {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      diagnostics: [
        error(code === "ENOENT" ? `stack file ${path} does not exist` : `cannot read stack file ${path}: ${(e as Error).message}`, {
          file: path,
          detail: code === "ENOENT" ? "Pass the stack with -f FILE, or run in a directory with stack.yaml." : undefined,
        }),
      ],
    };
  }
  const result = parseStack(file, text, opts);
  const seed = result.stack?.provider.seed;
  if (result.stack && seed) {
    try {
      readFileSync(seed);
    } catch {
      result.diagnostics.push(at(result.stack.source, ["provider", "seed"], `seed file ${seed} does not exist`, { detail: "provider.seed is resolved relative to the stack file." }));
      delete result.stack;
    }
  }
  return result;
}

/** The closest name in `pool`, when it is close enough to be a plausible typo. */
function suggest(word: string, pool: readonly string[]): string | undefined {
  if (!pool.length) return undefined;
  const guess = closest(word, pool as string[]);
  return distance(word, guess) <= Math.max(2, Math.floor(word.length / 3)) ? guess : undefined;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "list";
  if (typeof v === "object") return "map";
  return typeof v;
}

function valueAt(root: unknown, path: DocPath): unknown {
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
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
    cur = cur && typeof cur === "object" ? (cur as Record<string | number, unknown>)[key] : undefined;
  }
  return out;
}

/** Translates ajv errors into diagnostics; errors on interpolated values wait for resolution. */
function schemaDiagnostics(src: SourceDocument, root: unknown, errors: readonly ErrorObject[], base: DocPath = []): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword === "if" || e.keyword === "allOf") continue;
    // Errors inside propertyNames (e.g. its pattern) are reported once, by the propertyNames error.
    if (e.keyword !== "propertyNames" && (e as { propertyName?: string }).propertyName !== undefined) continue;
    const path = [...base, ...toDocPath(valueAt(root, base), e.instancePath)];
    const value = valueAt(root, path);
    if (typeof value === "string" && hasInterpolation(value) && ["type", "minLength", "pattern", "enum", "format"].includes(e.keyword)) continue;
    // The resource type enum gets its own message with a suggestion.
    if (e.keyword === "enum" && path.length === 3 && path[0] === "resources" && path[2] === "type") continue;
    let d: Diagnostic;
    const where = formatPath(path) || "the stack";
    switch (e.keyword) {
      case "required": {
        const prop = (e.params as { missingProperty: string }).missingProperty;
        d = at(src, path, `${where}: missing required property "${prop}"`);
        break;
      }
      case "additionalProperties": {
        const prop = (e.params as { additionalProperty: string }).additionalProperty;
        const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
        const guess = suggest(prop, known);
        const hint = guess ? ` (did you mean "${guess}"?)` : "";
        d = at(src, [...path, prop], `${where}: unknown property "${prop}"${hint}`, {
          key: true,
          detail: known.length ? `Expected one of: ${known.join(", ")}.` : undefined,
        });
        break;
      }
      case "type":
        d = at(src, path, `${where}: expected ${(e.params as { type: string }).type}, got ${typeOf(value)}`);
        break;
      case "enum":
        d = at(src, path, `${where}: "${String(value)}" is not allowed`, {
          detail: `Expected one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(", ")}.`,
        });
        break;
      case "minLength":
        d = at(src, path, `${where}: must not be empty`);
        break;
      case "pattern": {
        const desc = (e.parentSchema as { description?: string } | undefined)?.description;
        d = at(src, path, `${where}: "${String(value)}" is not of the expected form`, { detail: desc ?? `Expected to match ${(e.params as { pattern: string }).pattern}.` });
        break;
      }
      case "propertyNames": {
        const name = (e.params as { propertyName: string }).propertyName;
        d = at(src, [...path, name], `${where}: "${name}" is not a valid name`, { key: true, detail: "Names start with a letter or _ and contain letters, digits, _ and -." });
        break;
      }
      case "const":
        d = at(src, path, `${where}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`);
        break;
      default:
        d = at(src, path, `${where}: ${e.message ?? "is invalid"}`);
    }
    const key = `${d.line}:${d.column}:${d.summary}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  }
  return out;
}

/** Walks a raw value, calling `fn` for every string with its path. */
function eachString(value: unknown, path: DocPath, fn: (s: string, path: DocPath) => void): void {
  if (typeof value === "string") fn(value, path);
  else if (Array.isArray(value)) value.forEach((v, i) => eachString(v, [...path, i], fn));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) eachString(v, [...path, k], fn);
}

/** Whether some string in `value` satisfies `test` (eachString without building paths). */
function someString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === "string") return test(value);
  if (Array.isArray(value)) return value.some((v) => someString(v, test));
  if (value && typeof value === "object") for (const v of Object.values(value)) if (someString(v, test)) return true;
  return false;
}

function collectRefs(src: SourceDocument, value: unknown, path: DocPath, diags: Diagnostic[]): LocatedReference[] {
  const refs: LocatedReference[] = [];
  // Most values have no interpolation: skip the walk that builds a path for every string.
  if (!someString(value, (s) => s.includes("${"))) return refs;
  eachString(value, path, (s, p) => {
    if (!s.includes("${")) return;
    const t = parseTemplate(s);
    if (isTemplateError(t)) {
      diags.push(at(src, p, `${formatPath(p)}: bad interpolation: ${t.message}`, { offset: t.offset, detail: 'Interpolations look like ${name} or ${name.field[0]}; write $$ for a literal "$".' }));
      return;
    }
    for (const part of t.parts) if (typeof part !== "string") refs.push({ ...part, at: p });
  });
  return refs;
}

function isLiteral(value: unknown): boolean {
  return !someString(value, hasInterpolation);
}

const INVOKE_KEY = "fn::invoke";

/** Loads a stack from text. Pure: no file system or network access. */
export function parseStack(file: string, text: string, opts: LoadOptions = {}): LoadResult {
  const src = new SourceDocument(file, text);
  const diags: Diagnostic[] = [];
  for (const e of src.errors) {
    const lp = e.linePos?.[0] ?? src.lineCounter.linePos(e.pos[0]);
    const [line, column] = [lp.line, lp.col];
    diags.push(error(`YAML syntax error: ${e.message.split("\n")[0]}`, { file, line, column, detail: e.code }));
  }
  if (diags.length) return { diagnostics: diags };
  const root = src.toJS();
  if (root === null || typeof root !== "object" || Array.isArray(root)) {
    return { diagnostics: [error("the stack must be a YAML mapping with at least `name:`", { file, line: 1, column: 1 })] };
  }
  const doc = root as Record<string, unknown>;
  diags.push(...schemaDiagnostics(src, doc, validate("stack.schema.json", doc)));

  const resourcesRaw = (doc.resources && typeof doc.resources === "object" ? doc.resources : {}) as Record<string, Record<string, unknown>>;
  const variablesRaw = (doc.variables && typeof doc.variables === "object" ? doc.variables : {}) as Record<string, unknown>;
  const outputsRaw = (doc.outputs && typeof doc.outputs === "object" ? doc.outputs : {}) as Record<string, unknown>;
  const providerRaw = (doc.provider && typeof doc.provider === "object" ? doc.provider : {}) as Record<string, unknown>;
  const defaults = { project: providerRaw.project as string | undefined, location: providerRaw.location as string | undefined };

  // Names: variables and resources share one namespace.
  for (const name of Object.keys(variablesRaw)) {
    if (name in resourcesRaw) diags.push(at(src, ["variables", name], `"${name}" is declared both as a variable and as a resource`, { key: true, detail: "References use bare names, so each name must be unique." }));
  }

  const variables = new Map<string, VariableDecl>();
  for (const [name, value] of Object.entries(variablesRaw)) {
    const path = ["variables", name];
    if (value && typeof value === "object" && !Array.isArray(value) && INVOKE_KEY in value) {
      // An unknown function gets its own message with a suggestion below.
      const invokeErrors = validate("stack.schema.json#/definitions/Invoke", value).filter((e) => !(e.keyword === "enum" && e.instancePath === "/fn::invoke/function"));
      diags.push(...schemaDiagnostics(src, doc, invokeErrors, path));
      const inv = (value as Record<string, Record<string, unknown>>)[INVOKE_KEY] ?? {};
      const token = String(inv.function ?? "");
      const driver = functionDriver(token);
      if (!driver && token) {
        diags.push(at(src, [...path, INVOKE_KEY, "function"], `unknown function "${token}" (did you mean "${suggestToken(token, "function")}"?)`, { detail: `Known functions: ${FUNCTION_TOKENS.join(", ")}.` }));
      }
      const args = (inv.arguments && typeof inv.arguments === "object" ? inv.arguments : {}) as Record<string, unknown>;
      const refs = collectRefs(src, args, [...path, INVOKE_KEY, "arguments"], diags);
      if (driver) variables.set(name, { name, invoke: { token, driver, arguments: args }, refs });
    } else {
      variables.set(name, { name, value, refs: collectRefs(src, value, path, diags) });
    }
  }

  const resources = new Map<string, ResourceDecl>();
  const ownership = new Map<string, string>();
  for (const [name, raw] of Object.entries(resourcesRaw)) {
    if (!raw || typeof raw !== "object") continue;
    const path = ["resources", name];
    const type = String(raw.type ?? "");
    const driver = resourceDriver(type);
    if (!driver) {
      if (typeof raw.type === "string") {
        const isFn = functionDriver(type) !== undefined;
        diags.push(
          at(src, [...path, "type"], isFn ? `"${type}" is a function, not a resource type` : `unknown resource type "${type}" (did you mean "${suggestToken(type, "resource")}"?)`, {
            address: name,
            detail: isFn ? `Call it from variables with fn::invoke. Resource types: ${RESOURCE_TOKENS.join(", ")}.` : `Known resource types: ${RESOURCE_TOKENS.join(", ")}.`,
          }),
        );
      }
      continue;
    }
    const properties = (raw.properties && typeof raw.properties === "object" ? raw.properties : {}) as Record<string, unknown>;
    const opts = (raw.options && typeof raw.options === "object" ? raw.options : {}) as Record<string, unknown>;
    const refs = collectRefs(src, properties, [...path, "properties"], diags);
    const decl: ResourceDecl = {
      name,
      type,
      driver,
      properties,
      options: {
        dependsOn: Array.isArray(opts.dependsOn) ? opts.dependsOn.map(String) : [],
        protect: opts.protect === true,
        ignoreChanges: Array.isArray(opts.ignoreChanges) ? opts.ignoreChanges.map(String) : [],
        ...(typeof opts.import === "string" ? { import: opts.import } : {}),
      },
      refs,
    };
    resources.set(name, decl);

    // Literal values are checked now, before any network call; interpolated ones after resolution.
    const { inputs, problems } = driver.normalize(properties, defaults);
    for (const p of problems) {
      const v = valueAt(properties, p.path.slice(0, 1));
      if (v === undefined || !isLiteral(v)) continue;
      // A value of the wrong type (a map where a member belongs…) was reported by the schema check.
      if (typeof valueAt(properties, p.path) !== "string") continue;
      diags.push(at(src, [...path, "properties", ...p.path], `${name}: ${p.message}`, { address: name }));
    }
    if (isLiteral(properties) && problems.length === 0) {
      const key = driver.token + driver.ownershipKey(inputs);
      const other = ownership.get(key);
      if (other) {
        diags.push(
          at(src, path, driver.ownership === "binding"
            ? `resources "${other}" and "${name}" both manage role ${inputs.role}${inputs.condition ? ` (condition "${inputs.condition.title}")` : ""} on ${inputs.name}`
            : `resources "${other}" and "${name}" both grant ${inputs.member} role ${inputs.role} on ${inputs.name}`, {
            key: true,
            address: name,
            detail: driver.ownership === "binding" ? "Only one binding resource can be used per role (and condition); merge their members." : "Remove one of the duplicate member resources.",
          }),
        );
      } else ownership.set(key, name);
    }
    decl.options.ignoreChanges.forEach((p, i) => {
      const inputNames = ["name", "role", "condition", driver.ownership === "binding" ? "members" : "member"];
      if (!inputNames.includes(p)) diags.push(at(src, [...path, "options", "ignoreChanges", i], `${name}: ignoreChanges names "${p}", which is not an input of ${type}`, { address: name, detail: `Inputs: ${inputNames.join(", ")}.` }));
    });
    if (decl.options.import !== undefined) {
      const t = driver.parseImportId(decl.options.import, defaults);
      if (typeof t === "string") diags.push(at(src, [...path, "options", "import"], `${name}: ${t}`, { address: name }));
    }
  }

  const outputs = new Map<string, OutputDecl>();
  for (const [name, value] of Object.entries(outputsRaw)) outputs.set(name, { name, value, refs: collectRefs(src, value, ["outputs", name], diags) });

  // References: known roots and, for resources and invokes, known first fields.
  const graph = new Graph();
  const names = [...Object.keys(variablesRaw), ...Object.keys(resourcesRaw)];
  for (const n of [...variables.keys(), ...resources.keys()]) graph.addNode(n);
  const checkRefs = (from: string | undefined, refs: LocatedReference[]) => {
    for (const r of refs) {
      const target = resources.get(r.root) ?? variables.get(r.root);
      // Own keys only: "${toString}" or "${constructor}" must not find Object.prototype.
      if (!target && !Object.hasOwn(resourcesRaw, r.root) && !Object.hasOwn(variablesRaw, r.root)) {
        const guess = suggest(r.root, names);
        diags.push(at(src, r.at, `undefined reference "\${${r.text}}": no variable or resource is named "${r.root}"${guess ? ` (did you mean "${guess}"?)` : ""}`, { offset: r.offset }));
        continue;
      }
      if (r.root === from) {
        diags.push(at(src, r.at, `"${from}" refers to itself in "\${${r.text}}"`, { offset: r.offset }));
        continue;
      }
      const first = r.path[0];
      const fields = resources.get(r.root)?.driver.outputNames ?? variables.get(r.root)?.invoke?.driver.resultNames;
      if (fields && first?.kind === "prop" && !fields.includes(first.name)) {
        diags.push(at(src, r.at, `"\${${r.text}}": ${r.root} has no field "${first.name}"`, { offset: r.offset, detail: `Fields: ${fields.join(", ")}.` }));
      }
      if (from && graph.has(r.root)) graph.addEdge(from, r.root);
    }
  };
  for (const v of variables.values()) checkRefs(v.name, v.refs);
  for (const r of resources.values()) {
    checkRefs(r.name, r.refs);
    r.options.dependsOn.forEach((d, i) => {
      if (d === r.name) diags.push(at(src, ["resources", r.name, "options", "dependsOn", i], `${r.name} depends on itself`, { address: r.name }));
      else if (resources.has(d) || variables.has(d)) graph.addEdge(r.name, d);
      else if (!resourcesRaw[d]) {
        const guess = suggest(d, names.filter((n) => n !== r.name));
        diags.push(at(src, ["resources", r.name, "options", "dependsOn", i], `${r.name}: dependsOn names "${d}", which is not a resource${guess ? ` (did you mean "${guess}"?)` : ""}`, { address: r.name }));
      }
    });
  }
  for (const o of outputs.values()) checkRefs(undefined, o.refs);

  const cycle = graph.findCycle();
  if (cycle) {
    const first = cycle[0]!;
    const path = resources.has(first) ? ["resources", first] : ["variables", first];
    diags.push(at(src, path, `dependency cycle: ${cycle.join(" -> ")}`, { key: true, detail: "Break the cycle by removing a reference or a dependsOn entry." }));
  }

  const endpoint = typeof providerRaw.endpoint === "string" ? providerRaw.endpoint : "google";
  if (providerRaw.seed !== undefined && endpoint !== "embedded") {
    diags.push(at(src, ["provider", "seed"], "provider.seed is only used with endpoint: embedded", { detail: `endpoint is "${endpoint}".` }));
  }

  if (diags.length) return { diagnostics: diags };
  const dir = dirname(file);
  const stack: StackModel = {
    file,
    dir,
    name: doc.name as string,
    ...(typeof doc.description === "string" ? { description: doc.description } : {}),
    provider: {
      ...(defaults.project ? { project: defaults.project } : {}),
      ...(defaults.location ? { location: defaults.location } : {}),
      endpoint,
      ...(typeof providerRaw.seed === "string" ? { seed: resolve(dir, providerRaw.seed) } : {}),
    },
    variables,
    resources,
    outputs,
    lint: (doc.lint ?? {}) as Record<string, boolean>,
    graph,
    order: graph.topoOrder(),
    source: src,
  };
  const lint = lintStack(stack, opts);
  return hasErrors(lint) ? { diagnostics: lint } : { stack, diagnostics: lint };
}
