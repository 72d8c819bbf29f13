// Full resource names of the cloud objects converge edits, and the short forms a stack may use.
// The neutral name forms live in src/gcp/object-kinds.ts (shared with the emulator).
import {
  formatName,
  OBJECT_KINDS,
  parseFullName,
  SEGMENT,
  type ObjectKind,
  type ObjectName,
} from "../gcp/object-kinds.js";

export {
  formatName,
  kindOfName,
  parseFullName,
  SEGMENT,
  type ObjectKind,
  type ObjectName,
} from "../gcp/object-kinds.js";

/** Project numbers → project IDs, as Resource Manager answered them (src/engine/project-ids.ts). */
export type ProjectIds = ReadonlyMap<string, string>;

export interface NameDefaults {
  project?: string | undefined;
  location?: string | undefined;
  /** Project numbers → project IDs, as Resource Manager answered them (src/engine/project-ids.ts).
   *  Google takes `projects/{number}/…` and `projects/{id}/…` for one object: a completed name
   *  always has the ID, so one object has one name (one read, one claim, one policy to plan)
   *  however a stack or a state spells its project. A number missing from it stays as written. */
  projectIds?: ProjectIds | undefined;
}

/** Whether a project segment is a project number (digits; a project ID starts with a letter). */
export function isProjectNumber(segment: string): boolean {
  return /^[0-9]+$/.test(segment);
}

const PREFIX = "projects/".length;

/** The project number a name (`projects/{number}/…`, of any kind) spells its project with;
 *  undefined when it names it by ID, or is no such name. */
export function projectNumberOf(name: string): string | undefined {
  // Most names spell an ID: told by one character, before any regular expression.
  const c = name.charCodeAt(PREFIX);
  if (!(c >= 48 && c <= 57) || !name.startsWith("projects/")) return undefined;
  return /^projects\/([0-9]+)\//.exec(name)?.[1];
}

/** The project numbers among the projects of `names` (full names of any kind; others skipped). */
export function projectNumbersOf(names: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const name of names) {
    const n = projectNumberOf(name);
    if (n !== undefined) out.add(n);
  }
  return out;
}

/** `name` (of any kind) with its project number replaced by the project's ID, when `ids` knows it. */
export function nameWithProjectId(name: string, ids: ReadonlyMap<string, string> | undefined): string {
  const n = ids?.size ? projectNumberOf(name) : undefined;
  const id = n === undefined ? undefined : ids!.get(n);
  return id === undefined ? name : `projects/${id}/${name.slice(PREFIX + n!.length + 1)}`;
}

/** The number-to-ID map of `defaults` that changes names: none when it is empty (the memos of
 *  completed and normalised names then need not start over for an empty map). */
export function projectIdsIn(defaults: NameDefaults): ReadonlyMap<string, string> | undefined {
  return defaults.projectIds?.size ? defaults.projectIds : undefined;
}

/** `name` with its project number replaced by the project's ID, when `ids` knows it. */
function withProjectId(named: ObjectName, ids: ReadonlyMap<string, string> | undefined): ObjectName {
  const id = ids?.size && isProjectNumber(named.project) ? ids.get(named.project) : undefined;
  return id === undefined
    ? named
    : { ...named, project: id, full: formatName(named.kind, id, named.location, named.id) };
}

/**
 * Completes a full name from `{location}/{id}` or `{id}` using the stack's provider defaults.
 * Returns an error text (what was expected) when the name cannot be completed.
 */
export function completeName(kind: ObjectKind, name: string, defaults: NameDefaults): ObjectName | string {
  const full = parseFullName(kind, name);
  if (full) return withProjectId(full, defaults.projectIds);
  const collection = OBJECT_KINDS[kind].collection;
  const expected = `projects/{project}/locations/{location}/${collection}/{id}, {location}/{id} or {id}`;
  if (name.startsWith("projects/")) return `"${name}" is not a valid ${kind} name; expected ${expected}`;
  const parts = name.split("/");
  if (parts.length > 2 || !parts.every((s) => SEGMENT.test(s))) {
    return `"${name}" is not a valid ${kind} name; expected ${expected}`;
  }
  const id = parts[parts.length - 1]!;
  const location = parts.length === 2 ? parts[0] : defaults.location;
  if (!defaults.project) return `"${name}" is a short name but provider.project is not set; use ${expected}`;
  if (!location) return `"${name}" is a short name but provider.location is not set; use ${expected}`;
  return withProjectId(
    { kind, project: defaults.project, location, id, full: formatName(kind, defaults.project, location, id) },
    defaults.projectIds,
  );
}

/** Answers remembered per key, started over past `limit` entries (a long-lived process, such as
 *  the Automation API's, plans many stacks). */
function boundedMemo<V>(limit = 100_000): { get(key: string, compute: () => V): V; clear(): void } {
  let entries = new Map<string, V>();
  return {
    get(key, compute) {
      if (entries.has(key)) return entries.get(key) as V;
      if (entries.size >= limit) entries = new Map();
      const v = compute();
      entries.set(key, v);
      return v;
    },
    clear: () => void (entries = new Map()),
  };
}

const projects = boundedMemo<string>();

/** The project of an object's full name ("" when it is not one), remembered: a plan computes the
 *  outputs of each resource several times, and a policy's resources share its name (parsing the
 *  name was a tenth of those calls' time at 100,000 resources). */
export function projectOf(kind: ObjectKind, name: string): string {
  // The resources of one policy come one after another: its last answer needs no key built.
  if (name === lastName && kind === lastKind && typeof name === "string") return lastProject;
  const project = projects.get(`${kind} ${name}`, () => parseFullName(kind, name)?.project ?? "");
  lastKind = kind;
  lastName = name;
  lastProject = project;
  return project;
}
let lastKind: ObjectKind | undefined;
let lastName: string | undefined;
let lastProject = "";

/** completeName's answers by kind then name (no key string to build and hash per call), started
 *  over past 100,000 entries like boundedMemo. */
let completed = new Map<ObjectKind, Map<string, ObjectName | string>>();
let completedCount = 0;
let completedUnder: NameDefaults | undefined;

/**
 * completeName, remembered: a stack's resources share their policy's name (ten to one in the
 * bench), and the stack's provider defaults are the same for all of them. Starts over when the
 * defaults change.
 */
export function completeNameOnce(kind: ObjectKind, name: string, defaults: NameDefaults): ObjectName | string {
  const projectIds = projectIdsIn(defaults);
  if (
    completedUnder?.project !== defaults.project ||
    completedUnder?.location !== defaults.location ||
    completedUnder?.projectIds !== projectIds ||
    completedCount >= 100_000
  ) {
    completed = new Map();
    completedCount = 0;
    completedUnder = { project: defaults.project, location: defaults.location, projectIds };
  }
  let byName = completed.get(kind);
  if (!byName) completed.set(kind, (byName = new Map()));
  let answer = byName.get(name);
  if (answer === undefined) {
    answer = completeName(kind, name, defaults);
    byName.set(name, answer);
    completedCount++;
  }
  return answer;
}
