// Seed files (YAML) and data files (JSON) share one shape: schemas/emulator-seed.schema.json.
// Checking is done once here, with messages that name the file and the offending path, so the
// store can trust what it loads.
import { LineCounter, Parser, parseDocument, type Document } from "yaml";
import type { EmulatorPolicyObject, EmulatorWorld, Policy } from "../generated/schemas.js";
import { ALL_KINDS, OBJECT_KINDS, parseFullName, type ObjectKind } from "../gcp/object-kinds.js";
import { validate } from "../schemas/index.js";
import { InputFileError, MAX_SOURCE_BYTES, readInputFile } from "../fs/input-file.js";
import { DIALECTS } from "./dialects.js";
import { ApiError } from "./errors.js";
import { mergeBindings, policySize, sizeProblem } from "./bindings.js";
import { checkPolicyRules } from "./policy.js";
import { schemaProblem } from "./schema-errors.js";
import { lineColumnAt, MAX_STACK_DEPTH, tooDeep, yamlTooDeepAt } from "../diagnostics/nesting.js";

/** Each kind's list in a world file is named as its collection: restorePlans, endpoints… */
export const WORLD_KINDS: readonly { kind: ObjectKind; key: (typeof OBJECT_KINDS)[ObjectKind]["collection"] }[] =
  ALL_KINDS.map((kind) => ({ kind, key: OBJECT_KINDS[kind].collection }));

/** Where a world is wrong in a file, when known: 1-based line and column, and the path in it. */
export interface WorldErrorPosition {
  file?: string;
  line?: number;
  column?: number;
  path?: (string | number)[];
}

/** A seed or data file (or in-memory seed) that cannot be used: the user's to fix, not a bug.
 *  `problem` is the message without the file named in front (for a diagnostic that names it). */
export class WorldError extends Error {
  override readonly name = "WorldError";
  constructor(
    message: string,
    readonly position: WorldErrorPosition = {},
    readonly problem: string = message,
  ) {
    super(message);
  }
}

/** Reads, parses and checks a YAML seed file. Errors name the file, the problem and its line. */
export function loadSeedFile(path: string): EmulatorWorld {
  let text: string;
  try {
    text = readInputFile(path, "seed file", MAX_SOURCE_BYTES).toString("utf8");
  } catch (e) {
    if (e instanceof InputFileError) throw new WorldError(e.message, { file: path }, e.message);
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : (e as Error).message;
    throw new WorldError(`seed file ${path}: ${why}`, { file: path }, `emulator seed: ${why}`);
  }
  // Before yaml composes it: its composer recurses once per level.
  const deep = yamlTooDeepAt(Array.from(new Parser().parse(text)), MAX_STACK_DEPTH);
  if (deep !== undefined) {
    const why = tooDeep(MAX_STACK_DEPTH);
    const where = { file: path, ...lineColumnAt(text, deep) };
    throw new WorldError(`seed file ${path}: ${why}`, where, `emulator seed: ${why}`);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, lineCounter });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const at = err.linePos?.[0];
    // With prettyErrors the first line already says "… at line L, column C:".
    const first = err.message.split("\n")[0]!.replace(/:$/, "");
    const problem = `emulator seed: invalid YAML: ${first.replace(/ at line \d+, column \d+$/, "")}`;
    throw new WorldError(
      `seed file ${path}: invalid YAML: ${first}`,
      { file: path, ...(at ? { line: at.line, column: at.col } : {}) },
      problem,
    );
  }
  const value: unknown = doc.toJS() ?? {};
  const problem = worldProblemAt(coerceSeed(value));
  if (problem)
    throw new WorldError(
      `seed file ${path}: ${problem.message}`,
      { file: path, path: problem.path, ...positionOf(doc, lineCounter, problem.path) },
      `emulator seed: ${problem.message}`,
    );
  return value as EmulatorWorld;
}

/** The line and column of the deepest node of `path` that the document has. */
function positionOf(
  doc: Document,
  lineCounter: LineCounter,
  path: (string | number)[],
): { line?: number; column?: number } {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    if (range) {
      const pos = lineCounter.linePos(range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  return {};
}

/**
 * YAML reads an unquoted project number as a number; accept it as the string the schema wants,
 * and infer version 3 for a seed policy that has conditions but no version (authors forget it).
 */
export function coerceSeed(value: unknown): unknown {
  if (!value || typeof value !== "object") return value;
  const w = value as Record<string, unknown>;
  const projects = w.projects;
  if (projects && typeof projects === "object") {
    for (const p of Object.values(projects as Record<string, unknown>)) {
      const rec = p as Record<string, unknown> | null;
      if (rec && typeof rec === "object" && typeof rec.number === "number" && Number.isSafeInteger(rec.number))
        rec.number = String(rec.number);
    }
  }
  for (const key of ALL_KINDS.map((k) => OBJECT_KINDS[k].collection)) {
    const list = w[key];
    if (!Array.isArray(list)) continue;
    for (const o of list) {
      const pol = (o as { policy?: unknown } | null)?.policy as Record<string, unknown> | undefined;
      if (pol && typeof pol === "object" && pol.version === undefined && Array.isArray(pol.bindings)) {
        if (pol.bindings.some((b) => b && typeof b === "object" && (b as { condition?: unknown }).condition))
          pol.version = 3;
      }
    }
  }
  return value;
}

/**
 * Checks a world against the schema and the emulator's rules (names, duplicates, project
 * numbers, policy rules). `source` prefixes messages ("seed file x.yaml", "data file y.json").
 */
export function checkWorld(value: unknown, source: string): EmulatorWorld {
  const problem = worldProblemAt(value);
  if (problem) throw new WorldError(`${source}: ${problem.message}`, { path: problem.path });
  return value as EmulatorWorld;
}

type Problem = { message: string; path: (string | number)[] };

/** What is wrong with a world, and where (the path of the offending value). */
function worldProblemAt(value: unknown): Problem | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return {
      message: `expected a mapping with projects, ${WORLD_KINDS.map((w) => w.key)
        .join(", ")
        .replace(/, (\w+)$/, " and $1")}`,
      path: [],
    };
  const errors = validate("emulator-seed.schema.json", value);
  if (errors.length > 0)
    return {
      message: schemaProblem(errors),
      path: errors[0]!.instancePath
        .split("/")
        .slice(1)
        .map((k) => (/^\d+$/.test(k) ? Number(k) : k.replace(/~1/g, "/").replace(/~0/g, "~"))),
    };
  const world = value as EmulatorWorld;
  const numbers = new Map<string, string>();
  for (const [id, p] of Object.entries(world.projects ?? {})) {
    if (!p.number) continue;
    const other = numbers.get(p.number);
    if (other)
      return {
        message: `projects ${other} and ${id} both declare number ${p.number}`,
        path: ["projects", id, "number"],
      };
    numbers.set(p.number, id);
  }
  for (const [num, id] of numbers) {
    if (world.projects?.[num] && num !== id)
      return { message: `project ID ${num} is also the number of project ${id}`, path: ["projects", num] };
  }
  return objectsProblem(world, numbers);
}

/** The objects' names (form, duplicates) and policies. */
function objectsProblem(world: EmulatorWorld, numbers: Map<string, string>): Problem | undefined {
  const seen = new Set<string>();
  for (const { kind, key } of WORLD_KINDS) {
    const list = (world[key] ?? []) as { name: string; policy?: Policy }[];
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      const at = `${key}[${i}]`;
      const parsed = parseFullName(kind, o.name);
      if (!parsed)
        return {
          message:
            `${at}.name "${o.name}" is not ${article(kind)} name ` +
            `(projects/{project}/locations/{location}/${key}/{id})`,
          path: [key, i, "name"],
        };
      const project = numbers.get(parsed.project) ?? parsed.project;
      const canonical = `${kind}|${project}/${parsed.location}/${parsed.id}`;
      if (seen.has(canonical)) return { message: `${at}.name "${o.name}" is declared twice`, path: [key, i, "name"] };
      seen.add(canonical);
      if (o.policy) {
        const p = policyProblem(kind, o.policy, `${at}.policy`);
        if (p) return { message: p, path: [key, i, "policy"] };
      }
    }
  }
  return undefined;
}

function article(kind: ObjectKind): string {
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}

function policyProblem(kind: ObjectKind, policy: Policy, at: string): string | undefined {
  const dialect = DIALECTS[kind];
  if (!dialect.auditConfigs && policy.auditConfigs) {
    return `${at}.auditConfigs: ${dialect.api}'s Policy has no auditConfigs`;
  }
  try {
    checkPolicyRules(policy, at);
    const tooBig = sizeProblem(policySize(mergeBindings(policy.bindings ?? [])));
    return tooBig ? `${at}: ${tooBig}` : undefined;
  } catch (e) {
    if (e instanceof ApiError) return e.message;
    throw e;
  }
}

/** Checks one object of the admin API (`POST /__emulator/objects`) the same way. */
export function objectProblem(kind: ObjectKind, value: unknown): string | undefined {
  const def = kind === "federation" ? "EmulatorFederation" : "EmulatorPolicyObject";
  const errors = validate(`emulator-seed.schema.json#/definitions/${def}`, value);
  if (errors.length > 0) return schemaProblem(errors);
  const o = value as EmulatorPolicyObject;
  if (!parseFullName(kind, o.name)) return `"${o.name}" is not ${article(kind)} name`;
  if (o.policy) return policyProblem(kind, o.policy, "policy");
  return undefined;
}
