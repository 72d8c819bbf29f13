// Stack loading: YAML with positions → schema validation → static semantic checks. Every problem
// becomes a diagnostic with file:line:column and the document path; nothing touches the network.
import { dirname, resolve } from "node:path";
import { validate } from "../schemas/index.js";
import { type Diagnostic, error, hasErrors } from "../diagnostics/diagnostic.js";
import { lintStack } from "./lint.js";
import { functionDriver, suggestToken, FUNCTION_TOKENS } from "../drivers/registry.js";
import type { ForEachInstances, OutputDecl, StackModel, VariableDecl } from "./model.js";
import { type GivenInputs, NO_INPUTS, resolveConfig } from "./inputs.js";
import { type Defaults, loadResources } from "./load-resources.js";
import { collectRefs, type DeclaredNames, referenceGraph } from "./references.js";
import { loadTimeScope } from "./for-each.js";
import { loadMoved } from "./moved.js";
import { resolveProvider } from "./provider.js";
import { yamlSyntaxDiagnostics } from "./yaml-syntax.js";
import { schemaDiagnostics } from "./schema-diagnostics.js";
import { errorAt as at, nestingError, SourceDocument } from "../yaml/source.js";
import { secretStrings, sensitive } from "../language/sensitive.js";
import { ProgramSource } from "./program-source.js";
import { rememberSecrets, scrub, secretList } from "./redact.js";
import { decodeUtf8 } from "../base/utf8.js";
import { InputFileError, MAX_SOURCE_BYTES, readInputFile } from "../fs/input-file.js";
import { pushAll } from "../base/arrays.js";

export interface LoadResult {
  stack?: StackModel;
  diagnostics: Diagnostic[];
}

export interface LoadOptions {
  /** Lint warnings become errors */
  strict?: boolean;
  /** "Now" for expired-condition checks (tests) */
  now?: Date;
  /** Values given for the stack's inputs (`config:`); none when absent. */
  inputs?: GivenInputs;
  /** Inputs without a value are not an error (commands that use only the stack's name). */
  inputsOptional?: boolean;
}

/** The text of a stack file, or the diagnostic that says why there is none. */
function readStackText(path: string, file: string): string | Diagnostic {
  let bytes: Buffer;
  try {
    bytes = readInputFile(file, "stack file", MAX_SOURCE_BYTES);
  } catch (e) {
    if (e instanceof InputFileError) return error(`stack file ${path} ${e.problem}`, { file: path, detail: e.detail });
    const code = (e as NodeJS.ErrnoException).code;
    return error(
      code === "ENOENT"
        ? `stack file ${path} does not exist`
        : `cannot read stack file ${path}: ${(e as Error).message}`,
      {
        file: path,
        detail: code === "ENOENT" ? "Pass the stack with -f FILE, or run in a directory with stack.yaml." : undefined,
      },
    );
  }
  const hexByte = (b: number) => b.toString(16).toUpperCase().padStart(2, "0");
  const decoded = decodeUtf8(bytes);
  if (decoded.ok) return decoded.text;
  const { byte, line, column } = decoded.invalid;
  return error(`the stack file is not valid UTF-8: byte 0x${hexByte(byte)} cannot start or continue a character here`, {
    file,
    line,
    column,
    detail:
      "Stack files are UTF-8 text. Save the file as UTF-8 (it may have been saved as Latin-1 or another encoding).",
  });
}

/** Reads and loads a stack file (the only I/O of loading). */
export function loadStackFile(path: string, opts: LoadOptions = {}): LoadResult {
  const file = resolve(path);
  const text = readStackText(path, file);
  if (typeof text !== "string") return withInputProblems({ diagnostics: [text] }, opts.inputs);
  return withInputProblems(checkSeedFile(parseStack(file, text, opts)), opts.inputs);
}

/**
 * A stack file's load result with the problems of reading its inputs (`inputs.problems`) before
 * its own diagnostics: a bad --var or --var-file hides none of the stack's errors, nor they its.
 * The stack does not load while one of those problems is an error.
 */
export function withInputProblems(result: LoadResult, inputs: GivenInputs | undefined): LoadResult {
  const problems = inputs?.problems ?? [];
  if (!problems.length) return result;
  const diagnostics = [...problems, ...result.diagnostics];
  return hasErrors(problems) ? { diagnostics } : { ...result, diagnostics };
}

/** A loaded stack whose `provider.seed` names no file does not load (the I/O after loading). */
export function checkSeedFile(result: LoadResult): LoadResult {
  const seed = result.stack?.provider.seed;
  if (result.stack && seed) {
    try {
      readInputFile(seed, "seed file", MAX_SOURCE_BYTES);
    } catch (e) {
      if (e instanceof InputFileError)
        result.diagnostics.push(at(result.stack.source, ["provider", "seed"], e.message, { detail: e.detail }));
      else
        result.diagnostics.push(
          at(result.stack.source, ["provider", "seed"], `seed file ${seed} does not exist`, {
            detail: "provider.seed is resolved relative to the stack file.",
          }),
        );
      delete result.stack;
    }
  }
  return result;
}

const INVOKE_KEY = "fn::invoke";

const mapOr = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" ? (v as Record<string, unknown>) : {};

/** The variables whose value or function is known, in document order. */
function loadVariables(
  src: SourceDocument,
  doc: Record<string, unknown>,
  variablesRaw: Record<string, unknown>,
  diags: Diagnostic[],
): Map<string, VariableDecl> {
  const variables = new Map<string, VariableDecl>();
  for (const [name, value] of Object.entries(variablesRaw)) {
    const path = ["variables", name];
    if (!(value && typeof value === "object" && !Array.isArray(value) && Object.hasOwn(value, INVOKE_KEY))) {
      variables.set(name, { name, value, refs: collectRefs(src, value, path, diags) });
      continue;
    }
    // An unknown function gets its own message with a suggestion below.
    const invokeErrors = validate("stack.schema.json#/definitions/Invoke", value).filter(
      (e) => !(e.keyword === "enum" && e.instancePath === "/fn::invoke/function"),
    );
    pushAll(diags, schemaDiagnostics(src, doc, invokeErrors, path));
    const inv = mapOr((value as Record<string, unknown>)[INVOKE_KEY]);
    const token = String(inv.function ?? "");
    const driver = functionDriver(token);
    if (!driver && token) {
      diags.push(
        at(
          src,
          [...path, INVOKE_KEY, "function"],
          `unknown function "${token}" (did you mean "${suggestToken(token, "function")}"?)`,
          { detail: `Known functions: ${FUNCTION_TOKENS.join(", ")}.` },
        ),
      );
    }
    const args = mapOr(inv.arguments);
    const refs = collectRefs(src, args, [...path, INVOKE_KEY, "arguments"], diags);
    if (driver) variables.set(name, { name, invoke: { token, driver, arguments: args }, refs });
  }
  return variables;
}

/** The YAML syntax and structure errors of `src` (bad aliases, too deep), as diagnostics. */
function syntaxDiagnostics(src: SourceDocument): Diagnostic[] {
  const diags = yamlSyntaxDiagnostics(src);
  for (const p of src.structureErrors) {
    const { line, column } = src.positionAt(p.offset);
    diags.push(error(p.summary, { file: src.file, line, column, detail: p.detail }));
  }
  return diags;
}

/** Inputs, variables and resources share one namespace (references use bare names). */
function sharedNames(
  src: SourceDocument,
  configRaw: Record<string, unknown>,
  variablesRaw: Record<string, unknown>,
  resourcesRaw: Record<string, unknown>,
  diags: Diagnostic[],
): void {
  const detail = "References use bare names, so each name must be unique.";
  // A program's Config gives values, never references: its inputs are a namespace of their own,
  // as Pulumi's config keys are (a config "reader" and a resource "reader" are fine).
  const inputs = src instanceof ProgramSource ? [] : Object.keys(configRaw);
  for (const name of inputs) {
    const other = Object.hasOwn(variablesRaw, name)
      ? "a variable"
      : Object.hasOwn(resourcesRaw, name)
        ? "a resource"
        : undefined;
    if (other)
      diags.push(
        at(src, ["config", name], `"${name}" is declared both as an input and as ${other}`, { key: true, detail }),
      );
  }
  for (const name of Object.keys(variablesRaw)) {
    if (Object.hasOwn(resourcesRaw, name))
      diags.push(
        at(src, ["variables", name], `"${name}" is declared both as a variable and as a resource`, {
          key: true,
          detail,
        }),
      );
  }
}

const isOwnKey = (o: object, k: string): boolean => Object.prototype.propertyIsEnumerable.call(o, k);

/** The names written in these sections (their own keys, what Object.keys lists), without a Set of
 *  100,000 resource names built for a few look-ups. */
export function declaredNames(sections: readonly Record<string, unknown>[]): DeclaredNames {
  return {
    has: (name) => sections.some((s) => isOwnKey(s, name)),
    list: () => [...new Set(sections.flatMap((s) => Object.keys(s)))],
  };
}

function dropMissingInputs(diags: Diagnostic[]): void {
  const kept = diags.filter((d) => d.code !== "input/missing");
  diags.length = 0;
  pushAll(diags, kept);
}

/** Loads a stack from text. Pure: no file system or network access. */
export function parseStack(file: string, text: string, opts: LoadOptions = {}): LoadResult {
  const src = new SourceDocument(file, text);
  const syntax = syntaxDiagnostics(src);
  if (syntax.length) return { diagnostics: syntax };
  const root = src.toJS();
  if (root === null || typeof root !== "object" || Array.isArray(root)) {
    return {
      diagnostics: [error("the stack must be a YAML mapping with at least `name:`", { file, line: 1, column: 1 })],
    };
  }
  return loadStackDocument(src, root as Record<string, unknown>, opts);
}

/** Loads a stack from its document (what a YAML stack parses to, or what a program stack built),
 *  with `src` saying where each part of it was written. Pure: no file system or network access.
 *  Its diagnostics quote no secret met while loading: "(sensitive value)" instead, as in plans. */
export function loadStackDocument(
  src: SourceDocument,
  doc: Record<string, unknown>,
  opts: LoadOptions = {},
): LoadResult {
  const deep = nestingError(src, doc);
  if (deep) return { diagnostics: [deep] };
  const secrets = new Set<string>();
  const result = loadDocument(src, doc, opts, secrets);
  // Whatever this process prints from now on is scrubbed of them too (./redact.ts).
  rememberSecrets(secrets);
  return { ...result, diagnostics: scrub(result.diagnostics, secretList(secrets)) };
}

/** A dependency cycle of the reference graph, as an error at its first member. */
function checkCycle(
  src: SourceDocument,
  graph: StackModel["graph"],
  resources: StackModel["resources"],
  diags: Diagnostic[],
): void {
  const cycle = graph.findCycle();
  if (!cycle) return;
  const first = cycle[0]!;
  const path = resources.has(first) ? ["resources", resources.get(first)!.decl] : ["variables", first];
  const detail = "Break the cycle by removing a reference or a dependsOn entry.";
  diags.push(at(src, path, `dependency cycle: ${cycle.join(" -> ")}`, { key: true, detail }));
}

/** The provider's endpoint (google by default); a seed is an error with any but embedded. */
function endpointOf(src: SourceDocument, providerRaw: Record<string, unknown>, diags: Diagnostic[]): string {
  const endpoint = typeof providerRaw.endpoint === "string" ? providerRaw.endpoint : "google";
  if (providerRaw.seed !== undefined && endpoint !== "embedded") {
    const detail = `endpoint is "${endpoint}".`;
    diags.push(at(src, ["provider", "seed"], "provider.seed is only used with endpoint: embedded", { detail }));
  }
  return endpoint;
}

/** loadStackDocument, adding to `secrets` the strings of the secret values it meets. */
function loadDocument(
  src: SourceDocument,
  doc: Record<string, unknown>,
  opts: LoadOptions,
  secrets: Set<string>,
): LoadResult {
  const file = src.file;
  const diags = schemaDiagnostics(src, doc, validate("stack.schema.json", doc));

  const resourcesRaw = mapOr(doc.resources);
  const variablesRaw = mapOr(doc.variables);
  const providerRaw = mapOr(doc.provider);

  // Names: inputs, variables and resources share one namespace.
  const configRaw = mapOr(doc.config);
  sharedNames(src, configRaw, variablesRaw, resourcesRaw, diags);
  const config = resolveConfig(src, configRaw, opts.inputs ?? NO_INPUTS, diags);
  for (const c of config.values()) if (c.secret && c.value !== undefined) secretStrings(sensitive(c.value), secrets);
  if (opts.inputsOptional) dropMissingInputs(diags);
  const variables = loadVariables(src, doc, variablesRaw, diags);
  const scope = loadTimeScope(src, config, variables);
  // The provider's inputs resolved (acme-${env}); one waiting on a missing input leaves the
  // resources' names unchecked: that input's error is the one error.
  const provider = resolveProvider(src, providerRaw, scope, diags);
  const defaults: Defaults = { project: provider.fields.project, location: provider.fields.location };
  const instances = new Map<string, ForEachInstances>();
  const lenient = opts.inputsOptional === true || provider.missing;
  const resources = loadResources(
    src,
    resourcesRaw,
    defaults,
    { scope, lenient, secrets, instances, unchecked: provider.missing, literal: src.literalDocument(doc) },
    diags,
  );
  const moved = loadMoved(src, doc.moved, resources, diags);
  const outputs = new Map<string, OutputDecl>();
  for (const [name, value] of Object.entries(mapOr(doc.outputs)))
    outputs.set(name, { name, value, refs: collectRefs(src, value, ["outputs", name], diags) });

  // References: known roots and, for resources and invokes, known first fields.
  const names = declaredNames([configRaw, variablesRaw, resourcesRaw]);
  const graph = referenceGraph(src, { variables, resources, outputs, names, instances }, diags);
  checkCycle(src, graph, resources, diags);
  const endpoint = endpointOf(src, providerRaw, diags);

  // Warnings (an unknown key in a shared --var-file) do not stop the stack; errors do.
  if (hasErrors(diags)) return { diagnostics: diags };
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
      ...(provider.fields.seed !== undefined ? { seed: resolve(dir, provider.fields.seed) } : {}),
    },
    config,
    secrets: [...secrets],
    ...(doc.backend !== undefined ? { backend: doc.backend as StackModel["backend"] } : {}),
    variables,
    resources,
    outputs,
    moved,
    lint: mapOr(doc.lint) as Record<string, boolean>,
    ...(doc.policies !== undefined ? { policies: doc.policies } : {}),
    graph,
    order: graph.topoOrder(),
    source: src,
  };
  const lint = [...diags, ...lintStack(stack, opts)];
  return hasErrors(lint) ? { diagnostics: lint } : { stack, diagnostics: lint };
}
