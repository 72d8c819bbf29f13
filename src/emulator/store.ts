// The emulator's world in memory: projects, the objects of the three kinds and their policies.
// Every lookup is a map access; the serialised form of each object is cached so that writing the
// whole world (persistence, GET /__emulator/world) is a join of strings, not a re-encoding.
import type { EmulatorFederation, EmulatorPolicyObject, EmulatorProject, EmulatorWorld } from "../generated/schemas.js";
import { formatName, parseFullName, type ObjectKind, type PolicyKind } from "../gcp/object-kinds.js";
import { fillFederation, renderFederation } from "./federation.js";
import { emptyPolicy, newEtag, normalizePolicy, type StoredPolicy } from "./policy.js";
import { WORLD_KINDS } from "./seed.js";

export interface PolicyObject {
  kind: PolicyKind;
  /** Canonical full name (project ID form). */
  name: string;
  project: string;
  policy: StoredPolicy;
  fragment?: string | undefined;
}

export interface FederationObject {
  kind: "federation";
  name: string;
  project: string;
  record: EmulatorFederation;
  /** The federation's IAM policy (metastore v1alpha serves getIamPolicy / setIamPolicy on it). */
  policy: StoredPolicy;
  fragment?: string | undefined;
  /** Cached GET body and the project number it was rendered with. */
  wire?: { number: string | undefined; json: string } | undefined;
}

export type WorldObject = PolicyObject | FederationObject;

export class Store {
  private projects = new Map<string, EmulatorProject>();
  private numbers = new Map<string, string>();
  private readonly objects: Record<ObjectKind, Map<string, WorldObject>> = {
    restorePlan: new Map(),
    endpoint: new Map(),
    federation: new Map(),
  };
  private projectsFragment: string | undefined;

  /** Replaces the world with a checked one, filling defaults (etags, federation fields). */
  load(world: EmulatorWorld): void {
    this.projects = new Map(Object.entries(world.projects ?? {}).map(([id, p]) => [id, { ...p }]));
    this.reindexProjects();
    for (const m of Object.values(this.objects)) m.clear();
    const now = new Date().toISOString();
    for (const { kind, key } of WORLD_KINDS) {
      for (const o of world[key] ?? []) this.upsert(kind, o, now);
    }
  }

  private reindexProjects(): void {
    this.numbers = new Map();
    for (const [id, p] of this.projects) if (p.number) this.numbers.set(p.number, id);
    this.projectsFragment = undefined;
  }

  /** The project ID a path segment designates: the ID itself, or the ID whose number it is. */
  projectId(segment: string): string {
    return this.numbers.get(segment) ?? segment;
  }

  project(id: string): EmulatorProject | undefined {
    return this.projects.get(id);
  }

  setProject(id: string, config: EmulatorProject): void {
    this.projects.set(id, { ...config });
    // No federation cache to drop: federationJson re-renders when the project number changed.
    this.reindexProjects();
  }

  /** Finds an object from the segments of a request path (project may be a number). */
  find(kind: ObjectKind, projectSegment: string, location: string, id: string): WorldObject | undefined {
    return this.objects[kind].get(formatName(kind, this.projectId(projectSegment), location, id));
  }

  /** The objects of `kind` in one location of a project (given by ID), by name. */
  listIn(kind: ObjectKind, project: string, location: string): WorldObject[] {
    const prefix = `projects/${project}/locations/${location}/`;
    const found = [...this.objects[kind].values()].filter((o) => o.name.startsWith(prefix));
    return found.sort((a, b) => compare(a.name, b.name));
  }

  /** The locations where a project (given by ID) has objects of any kind, sorted. */
  locationsOf(project: string): string[] {
    const out = new Set<string>();
    for (const m of Object.values(this.objects)) {
      for (const o of m.values()) if (o.project === project) out.add(o.name.split("/")[3]!);
    }
    return [...out].sort(compare);
  }

  /** A project the world declares, or one that has objects. */
  knows(project: string): boolean {
    if (this.projects.has(project)) return true;
    return Object.values(this.objects).some((m) => [...m.values()].some((o) => o.project === project));
  }

  findByName(kind: ObjectKind, name: string): WorldObject | undefined {
    const p = parseFullName(kind, name);
    return p ? this.find(kind, p.project, p.location, p.id) : undefined;
  }

  /** Adds or replaces one object (already checked); returns it. */
  upsert(
    kind: ObjectKind,
    value: EmulatorPolicyObject | EmulatorFederation,
    now = new Date().toISOString(),
  ): WorldObject {
    const p = parseFullName(kind, value.name);
    if (!p) throw new Error(`"${value.name}" is not a ${kind} name`);
    const project = this.projectId(p.project);
    const name = formatName(kind, project, p.location, p.id);
    const { policy: given, ...rest } = value;
    const policy = given ? normalizePolicy(given, given.etag ?? newEtag()) : emptyPolicy();
    const obj: WorldObject =
      kind === "federation"
        ? { kind, name, project, record: fillFederation({ ...(rest as EmulatorFederation), name }, now), policy }
        : { kind, name, project, policy };
    this.objects[kind].set(name, obj);
    return obj;
  }

  remove(kind: ObjectKind, name: string): boolean {
    const o = this.findByName(kind, name);
    return o ? this.objects[kind].delete(o.name) : false;
  }

  setPolicy(obj: WorldObject, policy: StoredPolicy): void {
    obj.policy = policy;
    obj.fragment = undefined;
  }

  federationJson(obj: FederationObject, intEnums: boolean): string {
    const number = this.projects.get(obj.project)?.number;
    if (intEnums) return renderFederation(obj.record, number, true);
    if (!obj.wire || obj.wire.number !== number)
      obj.wire = { number, json: renderFederation(obj.record, number, false) };
    return obj.wire.json;
  }

  objectJson(obj: WorldObject): string {
    if (obj.fragment === undefined) {
      if (obj.kind !== "federation") obj.fragment = `{"name":${JSON.stringify(obj.name)},"policy":${obj.policy.json}}`;
      else {
        // A federation's policy is kept once it has bindings or audit configs.
        const record = JSON.stringify(obj.record);
        const { policy } = obj;
        const kept = policy.bindings.length > 0 || policy.auditConfigs !== undefined;
        obj.fragment = kept ? `${record.slice(0, -1)},"policy":${policy.json}}` : record;
      }
    }
    return obj.fragment;
  }

  /** The whole world as JSON in the seed's shape; one object per line for readable diffs. */
  serialize(): string {
    if (this.projectsFragment === undefined) this.projectsFragment = JSON.stringify(Object.fromEntries(this.projects));
    const parts = [`{"projects":${this.projectsFragment}`];
    for (const { kind, key } of WORLD_KINDS) {
      const items: string[] = [];
      for (const o of this.objects[kind].values()) items.push(this.objectJson(o));
      parts.push(items.length === 0 ? `"${key}":[]` : `"${key}":[\n${items.join(",\n")}\n]`);
    }
    return `${parts.join(",\n")}}\n`;
  }
}

/** Code-point order (as names sort on Google's side), not the locale's. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
