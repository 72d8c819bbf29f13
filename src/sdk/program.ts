// Program stacks: a module whose default export declares the resources (`stack.ts`, `.mjs`,
// `.js`). Running it builds the stack document a YAML stack parses to, with the call site of each
// part; src/config/load.ts loadStackDocument then checks and models it exactly as it does YAML,
// so plans, state, review and JSON are the same. TypeScript runs through tsx's hooks, registered
// from its API when the first .ts stack is loaded: no build step, no loader flag.
import { existsSync } from "node:fs";
import { basename, dirname, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  checkSeedFile,
  type LoadOptions,
  type LoadResult,
  loadStackDocument,
  withInputProblems,
} from "../config/load.js";
import { ProgramSource } from "../config/program-source.js";
import { type Diagnostic, error, hasErrors, UserError } from "../diagnostics/diagnostic.js";
import { checkInputFile, InputFileError, MAX_SOURCE_BYTES } from "../fs/input-file.js";
import { functionDriver } from "../drivers/registry.js";
import { validate } from "../schemas/index.js";
import { statePathOf } from "../state/factory.js";
import { openCloud, type OpenCloud } from "../connect/cloud.js";
import type { CallSite } from "./call-site.js";
import type { Position } from "../yaml/source.js";
import type { ProviderConfig } from "../generated/schemas.js";
import type { BackendType } from "../state/backend-types.js";
import { guarded, ProgramWork, thrownBy } from "./program-guard.js";
import { ProgramBuilder, runInProgram, type StackContext } from "./context.js";

/** What a program stack exports by default; an object it returns (Pulumi's inline programs) holds
 *  stack outputs, as `stack.export` gives them. */
export type Program = (stack: StackContext) => void | Record<string, unknown> | Promise<void | Record<string, unknown>>;

export interface ProgramOptions extends LoadOptions {
  /** An explicit state file: direct invokes against the embedded emulator use the world beside it. */
  state?: string;
  callTimeoutMs?: number;
  /** The command that must not call the cloud (validate, graph): a direct invoke is then an error
   *  at its call instead of a read. */
  offline?: string;
  /** --backend: where a StackReference reads another stack's state. */
  backendType?: BackendType;
}

const TSX_REGISTERED = Symbol.for("converge.sdk.tsx-registered");

/** Lets this process import TypeScript, as the `tsx` command does: tsx's ESM and CommonJS hooks
 *  (a .ts file in a package without "type": "module" is CommonJS), with source maps, so stack
 *  traces, and the call sites taken from them, are positions in the .ts file. Once per process. */
async function registerTypeScript(): Promise<void> {
  const g = globalThis as Record<symbol, unknown>;
  if (g[TSX_REGISTERED]) return;
  g[TSX_REGISTERED] = true;
  const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
  cjs.register();
  esm.register();
}

/** What a stack file is: a program its default export declares, or (Pulumi's shape) a module whose
 *  top-level code declares the resources and whose other exports are the stack's outputs. */
type Loaded = Program | { exports: Record<string, unknown> };

let imports = 0;

/** A top-level program's provider, as @pulumi/google-native's defaults are read from the
 *  environment: GOOGLE_PROJECT (or GOOGLE_CLOUD_PROJECT, GCLOUD_PROJECT, CLOUDSDK_CORE_PROJECT) and
 *  GOOGLE_REGION (or GCLOUD_REGION, CLOUDSDK_COMPUTE_REGION); the endpoint is the CLI's choice. */
function providerFromEnv(env = process.env): ProviderConfig {
  const first = (...names: string[]) => names.map((n) => env[n]).find((v) => v);
  const project = first("GOOGLE_PROJECT", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT");
  const location = first("GOOGLE_REGION", "GCLOUD_REGION", "CLOUDSDK_COMPUTE_REGION");
  return { ...(project ? { project } : {}), ...(location ? { location } : {}) };
}

/** Imports a stack file, its top-level code run as the program `b` (a fresh copy of the module
 *  each time: a top-level program declares its resources when it is evaluated). */
async function importProgram(file: string, work: ProgramWork, b: ProgramBuilder): Promise<Loaded | Diagnostic> {
  try {
    checkInputFile(file, "stack file", MAX_SOURCE_BYTES);
  } catch (e) {
    if (e instanceof InputFileError) return error(e.message, { file, detail: e.detail });
    // A missing or unreadable file: import() below says so.
  }
  const url = `${pathToFileURL(file).href}?converge-run=${++imports}`;
  b.stack.provider = providerFromEnv();
  // Its top-level code runs guarded (src/sdk/program-guard.ts); import()'s own failure is a value.
  const loaded = await guarded(
    file,
    "load",
    () =>
      runInProgram(b, async () => {
        try {
          if (/\.[mc]?ts$/i.test(file)) await registerTypeScript();
          return { mod: (await import(url)) as Record<string, unknown> };
        } catch (e) {
          return { thrown: e };
        }
      }),
    work,
  );
  if ("failure" in loaded) return loaded.failure;
  if ("thrown" in loaded.value) {
    const e = loaded.value.thrown;
    const code = (e as NodeJS.ErrnoException).code;
    // The stack file itself (a package it imports is named in the same words: thrownBy says which).
    if (code === "ERR_MODULE_NOT_FOUND" && !existsSync(file)) {
      return error(`stack file ${file} does not exist`, { file, detail: "Pass the stack with -f FILE." });
    }
    return thrownBy(file, e);
  }
  const mod = loaded.value.mod;
  const fn =
    typeof mod.default === "function" ? mod.default : (mod.default as { default?: unknown } | undefined)?.default;
  if (typeof fn === "function") {
    b.stack.provider = {};
    return fn as Program;
  }
  // A CommonJS module (a .ts file outside a "type": "module" package) has its exports as default.
  const onlyDefault = Object.keys(mod).every((k) => k === "default" || k === "module.exports");
  const cjs = onlyDefault && mod.default !== null && typeof mod.default === "object";
  const named = Object.entries(cjs ? (mod.default as Record<string, unknown>) : mod);
  const exports = Object.fromEntries(named.filter(([k]) => !["default", "module.exports", "__esModule"].includes(k)));
  if (Object.keys(b.resources).length || Object.keys(exports).length) return { exports };
  const detail =
    "Declare the resources at the top level (`new backup.v1.RestorePlanIamBinding(…)`, outputs as " +
    "`export const`), or write `export default (stack) => { … }`.";
  return error(`${basename(file)} declares no resources`, { file, line: 1, column: 1, detail });
}

/** Why a direct read may not call the cloud: the command does not (validate, graph), or the inputs
 *  given have errors (the run fails, with them reported, and a bad input makes no call). */
function readRefusal(
  token: string,
  opts: ProgramOptions,
  read: ReadonlySet<string>,
): { summary: string; detail: string } | undefined {
  const fn = token.slice(token.lastIndexOf(":") + 1);
  if (opts.offline !== undefined)
    return {
      summary: `${fn} reads the cloud at once; ${opts.offline} does not call the cloud`,
      detail: `Use ${fn}Output (read at plan time), or run plan.`,
    };
  if (hasErrors(opts.inputs?.problems ?? []))
    return {
      summary: `${fn} reads the cloud at once; it does not while the --var and --var-file errors stand`,
      detail: "Fix those errors and run the command again.",
    };
  // A --var the program has not read (yet) may be an unknown input, an error: no call before it is read.
  const unread = [...new Set(opts.inputs?.vars.map((v) => v.name) ?? [])].filter((n) => !read.has(n));
  if (unread.length) {
    const given = `--var ${unread.join(", --var ")} ${unread.length === 1 ? "is" : "are"} given`;
    const detail = "Read every --var with Config before the read, or remove the --var the program does not read.";
    return { summary: `${fn} reads the cloud at once; it does not while ${given} and not read by the program`, detail };
  }
  return undefined;
}

/** Reads functions at once for the direct form, through the cloud the stack declares. The cloud
 *  is opened by a read and closed once no read follows at once (the next one opens it again): an
 *  idle program holds none of converge's handles, so the event loop empties when it is stuck
 *  (src/sdk/program-guard.ts). Under an `offline` command a direct read is an error. */
function directReader(builder: () => ProgramBuilder, file: string, opts: ProgramOptions) {
  let cloud: Promise<OpenCloud> | undefined;
  let closing: Promise<void> = Promise.resolve();
  let inFlight = 0;
  const closeCloud = () => {
    const open = cloud;
    cloud = undefined;
    if (open) closing = closing.then(async () => (await open.catch(() => undefined))?.close()).catch(() => undefined);
    return closing;
  };
  const read = async (token: string, args: Record<string, unknown>, site: CallSite | undefined) => {
    const b = builder();
    // After the program finished: refused, and the caller's code waits for ever (nothing holds the process).
    if (b.refusedLate(token.slice(token.lastIndexOf(":") + 1), site)) return new Promise<never>(() => {});
    const driver = functionDriver(token)!;
    const fail = (summary: string, detail?: string) => new UserError(b.errorAt(site, summary, detail));
    const refused = readRefusal(token, opts, new Set(Object.keys(b.inputs)));
    if (refused) {
      const d = b.errorAt(site, refused.summary, refused.detail);
      b.diagnostics.push(d);
      throw new UserError(d);
    }
    const problems = validate(driver.argsSchema, args);
    if (problems.length)
      throw fail(`${token}: argument ${problems[0]!.instancePath.slice(1) || "arguments"} ${problems[0]!.message}`);
    const p = b.stack.provider;
    const named = driver.objectName(args, { project: p.project, location: p.location });
    if (!("name" in named)) throw fail(`${token}: ${named.problem.message}`);
    const stackName = b.stack.name;
    const stateDir = dirname(
      statePathOf({ stackFile: file, stackName, ...(opts.state !== undefined ? { state: opts.state } : {}) }),
    );
    const dir = dirname(file);
    const after = closing;
    cloud ??= after.then(() =>
      openCloud(
        {
          endpoint: p.endpoint ?? "google",
          ...(p.seed ? { seed: resolve(dir, p.seed) } : {}),
          ...(p.project ? { project: p.project } : {}),
        },
        { stateDir, stackName, ...(opts.callTimeoutMs ? { callTimeoutMs: opts.callTimeoutMs } : {}) },
      ),
    );
    inFlight++;
    try {
      return await driver.read((await cloud).port, named.name);
    } catch (e) {
      throw fail(`${token}: cannot read ${named.name}`, (e as Error).message);
    } finally {
      inFlight--;
      setImmediate(() => void (inFlight === 0 && closeCloud()));
    }
  };
  return { read, close: closeCloud };
}

/** What running a program gave, as plain data (it crosses from a worker thread: ./program-isolated.ts):
 *  the stack document it declared, with the call sites of its parts, or (no document) how it failed. */
export interface ProgramRun {
  diagnostics: Diagnostic[];
  document?: Record<string, unknown>;
  positions?: Map<string, Position>;
}

/** A builder for the program `file`, with its direct reader. */
function newBuilder(file: string, name: string, opts: ProgramOptions) {
  let builder: ProgramBuilder | undefined; // eslint-disable-line prefer-const -- set once the reader exists
  const reader = directReader(() => builder!, file, opts);
  const readsNow = opts.offline === undefined && !hasErrors(opts.inputs?.problems ?? []);
  builder = new ProgramBuilder(file, name, reader.read, opts.inputs, readsNow);
  if (opts.backendType !== undefined) builder.backendType = opts.backendType;
  return { b: builder, reader };
}

/** Runs `program`: the stack document it declares; `file` is where its positions are taken from.
 *  `work`: what the program scheduled while it loaded, cancelled with the rest once it has run. */
async function runProgram(
  program: Program,
  file: string,
  name: string,
  opts: ProgramOptions = {},
  work = new ProgramWork(),
): Promise<ProgramRun> {
  return runBuilt(newBuilder(file, name, opts), program, work);
}

/** Runs a loaded program with its builder: the default export, or a top-level program's exports. */
async function runBuilt(
  { b, reader }: ReturnType<typeof newBuilder>,
  loaded: Loaded,
  work: ProgramWork,
): Promise<ProgramRun> {
  const file = b.file;
  let ran: Awaited<ReturnType<typeof guarded>>;
  const body = async () => {
    if (typeof loaded === "function") exportAll(b, await loaded(b.stack));
    else for (const [k, v] of Object.entries(loaded.exports)) b.stack.export(k, v);
    await b.finish();
  };
  try {
    ran = await guarded(file, "run", () => runInProgram(b, body), work);
  } finally {
    b.settle();
    await reader.close(); // its own timers first (it never throws)
    work.cancel();
  }
  if ("failure" in ran)
    return { diagnostics: b.diagnostics.includes(ran.failure) ? b.diagnostics : [...b.diagnostics, ran.failure] };
  // Read once, as plain data: a getter the program put on the stack (or on what it holds) that
  // throws is the program's failure, here, not converge's later.
  try {
    return { diagnostics: b.diagnostics, document: structuredClone(b.document()), positions: b.positions };
  } catch (e) {
    return { diagnostics: [...b.diagnostics, thrownBy(file, e)] };
  }
}

/** The outputs a program returned (a plain object, as Pulumi's inline programs return; anything
 *  else, such as the resource an arrow function's body happens to give, is no output). */
function exportAll(b: ProgramBuilder, returned: unknown): void {
  if (returned === null || typeof returned !== "object") return;
  const proto = Object.getPrototypeOf(returned) as unknown;
  if (proto !== Object.prototype && proto !== null) return;
  for (const [k, v] of Object.entries(returned)) b.stack.export(k, v);
}

/** Loads the stack a program run declared, as a YAML stack's document is. */
export function loadRun(run: ProgramRun, file: string, opts: LoadOptions = {}): LoadResult {
  if (!run.document) return { diagnostics: run.diagnostics };
  const loaded = loadStackDocument(new ProgramSource(file, run.positions ?? new Map()), run.document, opts);
  // The program's own mistakes (a duplicate name) and the stack's, together, as a YAML stack's.
  if (run.diagnostics.length) return { diagnostics: byPosition([...run.diagnostics, ...loaded.diagnostics]) };
  return checkSeedFile(loaded);
}

/** Runs `program` and loads the stack it declares (see runProgram). */
export async function loadProgram(
  program: Program,
  file: string,
  name: string,
  opts: ProgramOptions = {},
  work = new ProgramWork(),
): Promise<LoadResult> {
  return loadRun(await runProgram(program, file, name, opts, work), file, opts);
}

/** Diagnostics in the order of their positions (those with none last; stable). */
function byPosition(diags: Diagnostic[]): Diagnostic[] {
  const far = Number.MAX_SAFE_INTEGER;
  const key = (d: Diagnostic) => [d.file ?? "\uffff", d.line ?? far, d.column ?? far] as const;
  return [...diags].sort((a, b) => {
    const [fa, la, ca] = key(a);
    const [fb, lb, cb] = key(b);
    return fa < fb ? -1 : fa > fb ? 1 : la - lb || ca - cb;
  });
}

/** Runs a program stack file: imports it and runs its default export, or its top-level code (see runProgram). */
export async function runProgramFile(path: string, opts: ProgramOptions = {}): Promise<ProgramRun> {
  const file = resolve(path);
  const work = new ProgramWork();
  const built = newBuilder(file, basename(file, extname(file)), opts);
  const program = await importProgram(file, work, built.b).catch((e: unknown) => {
    work.cancel();
    throw e;
  });
  if (typeof program !== "function" && !("exports" in program)) {
    work.cancel();
    built.b.settle();
    await built.reader.close();
    const diags = built.b.diagnostics;
    return { diagnostics: diags.includes(program) ? diags : diags.concat([program]) };
  }
  return runBuilt(built, program, work);
}

/** Loads a program stack file: runs its default export and loads the stack it declares. */
export async function loadProgramFile(path: string, opts: ProgramOptions = {}): Promise<LoadResult> {
  return withInputProblems(loadRun(await runProgramFile(path, opts), resolve(path), opts), opts.inputs);
}
