// Generated benchmark worlds: N resources in blocks of 20 (10 on restore plans, 10 on endpoints),
// every type of the IAM family in the mix. Block k, by k % 5:
//   0-2  a restore plan with 10 RestorePlanIamBinding (one per role), an endpoint with 10
//        EndpointIamMember (one member each);
//   3    a restore plan with 10 RestorePlanIamMember, an endpoint with 10 EndpointIamBinding;
//   4    a restore plan managed whole by one RestorePlanIamPolicy (10 bindings and an audit
//        config) plus another with 9 RestorePlanIamMember; an endpoint managed whole by one
//        EndpointIamPolicy (10 bindings) plus another with 9 EndpointIamBinding.
// So P = N/10 plus two policies per fifth block (P = 1.2 N/10 when N is a multiple of 100: 240
// policies for N = 2,000).
//
// The "changed" variant touches one resource of every policy (so every policy gets one write):
// a binding gets a different member list and a policy resource a different binding (updates), a
// member is swapped for another (a replacement: remove + add in the same policy).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const PROJECT = "bench-project";
export const PROJECT_NUMBER = "100000000001";
export const LOCATION = "us-central1";
/** Resources per policy. */
export const PER_POLICY = 10;

const TYPES = {
  restorePlans: {
    policy: "cloudnative:backup/v1:RestorePlanIamPolicy",
    binding: "cloudnative:backup/v1:RestorePlanIamBinding",
    member: "cloudnative:backup/v1:RestorePlanIamMember",
  },
  endpoints: {
    policy: "cloudnative:aiplatform/v1beta1:EndpointIamPolicy",
    binding: "cloudnative:aiplatform/v1beta1:EndpointIamBinding",
    member: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
  },
} as const;
type Collection = keyof typeof TYPES;
type Own = "policy" | "binding" | "member";

/** One managed object: its collection, id, the type of its resources and how many. */
interface ManagedObject {
  collection: Collection;
  /** Index in its collection (the object's id). */
  index: number;
  own: Own;
  resources: number;
}

export interface Shape {
  /** Resources. */
  n: number;
  /** Policies (objects managed). */
  p: number;
  restorePlans: number;
  endpoints: number;
  /** The managed objects, in stack order. */
  objects: ManagedObject[];
  /** Resources the "changed" variant changes (one per policy). */
  changed: number;
  /** Policies the "changed" variant touches. */
  changedPolicies: number;
  /** The changed plan: replacements (1 to add and 1 to destroy each) and updates in place. */
  changedReplaced: number;
  changedUpdated: number;
}

/** The objects of block k (20 resources): see the top of this file. */
function blockObjects(k: number, next: Record<Collection, number>): ManagedObject[] {
  const take = (collection: Collection, own: Own, resources: number): ManagedObject => ({
    collection,
    index: next[collection]++,
    own,
    resources,
  });
  const m = k % 5;
  if (m < 3) return [take("restorePlans", "binding", PER_POLICY), take("endpoints", "member", PER_POLICY)];
  if (m === 3) return [take("restorePlans", "member", PER_POLICY), take("endpoints", "binding", PER_POLICY)];
  return [
    take("restorePlans", "policy", 1),
    take("restorePlans", "member", PER_POLICY - 1),
    take("endpoints", "policy", 1),
    take("endpoints", "binding", PER_POLICY - 1),
  ];
}

export function shapeOf(n: number): Shape {
  if (!Number.isInteger(n) || n < 2 * PER_POLICY || n % (2 * PER_POLICY) !== 0)
    throw new RangeError(`N must be a positive multiple of ${2 * PER_POLICY}, got ${n}`);
  const next: Record<Collection, number> = { restorePlans: 0, endpoints: 0 };
  const objects: ManagedObject[] = [];
  for (let k = 0; k < n / (2 * PER_POLICY); k++) objects.push(...blockObjects(k, next));
  const p = objects.length;
  const changedReplaced = objects.filter((o) => o.own === "member").length;
  return {
    n,
    p,
    restorePlans: next.restorePlans,
    endpoints: next.endpoints,
    objects,
    changed: p,
    changedPolicies: p,
    changedReplaced,
    changedUpdated: p - changedReplaced,
  };
}

/** The quota scenario's world: P restore plans (all on one service, gkebackup), each with one
 *  RestorePlanIamBinding, so that a cold apply writes P policies of that service. */
export function quotaShape(p: number): Shape {
  if (!Number.isInteger(p) || p < 1) throw new RangeError(`P must be a positive integer, got ${p}`);
  const objects: ManagedObject[] = Array.from({ length: p }, (_, index) => ({
    collection: "restorePlans",
    index,
    own: "binding",
    resources: 1,
  }));
  return {
    n: p,
    p,
    restorePlans: p,
    endpoints: 0,
    objects,
    changed: p,
    changedPolicies: p,
    changedReplaced: 0,
    changedUpdated: p,
  };
}

const pad = (i: number) => String(i).padStart(5, "0");
const rpId = (i: number) => `rp-${pad(i)}`;
const epId = (i: number) => `ep-${pad(i)}`;
const fullName = (collection: string, id: string) => `projects/${PROJECT}/locations/${LOCATION}/${collection}/${id}`;

/** The resource of each policy that the "changed" variant changes. */
const changedIndex = (policy: number) => policy % PER_POLICY;

/** Emulator seed: the project and every object, each with one binding converge does not manage. */
export function seedYaml(shape: Shape): string {
  const out: string[] = [
    "# Generated by bench/generate.ts: the benchmark's emulator world.",
    "projects:",
    `  ${PROJECT}:`,
    `    number: "${PROJECT_NUMBER}"`,
    shape.restorePlans ? "restorePlans:" : "restorePlans: []",
  ];
  const unmanaged = [
    "    policy:",
    "      bindings:",
    "        - role: roles/bench.unmanaged",
    "          members: [user:owner@example.com]",
  ];
  for (let i = 0; i < shape.restorePlans; i++) out.push(`  - name: ${fullName("restorePlans", rpId(i))}`, ...unmanaged);
  out.push(shape.endpoints ? "endpoints:" : "endpoints: []");
  for (let i = 0; i < shape.endpoints; i++) out.push(`  - name: ${fullName("endpoints", epId(i))}`, ...unmanaged);
  return out.join("\n") + "\n";
}

/** The stack; `changed` gives the 10%-changed variant. */
export function stackYaml(shape: Shape, changed: boolean): string {
  const out: string[] = [
    "# Generated by bench/generate.ts: the benchmark stack.",
    "name: bench",
    "provider:",
    `  project: ${PROJECT}`,
    `  location: ${LOCATION}`,
    "resources:",
  ];
  for (const o of shape.objects) out.push(...objectResources(o, changed));
  return out.join("\n") + "\n";
}

const AUDIT =
  "[{ service: allServices, auditLogConfigs: [{ logType: DATA_READ, exemptedMembers: [user:auditor@example.com] }] }]";

/** The resources of one managed object, as YAML lines; `changed` changes one of them. */
function objectResources(o: ManagedObject, changed: boolean): string[] {
  const i = o.index;
  const rp = o.collection === "restorePlans";
  const prefix = `${rp ? "rp" : "ep"}${pad(i)}`;
  const head = (key: string, own: Own) => [
    `  ${prefix}_${key}:`,
    `    type: ${TYPES[o.collection][own]}`,
    "    properties:",
    `      name: ${rp ? rpId(i) : epId(i)}`,
  ];
  const isChanged = (j: number) => changed && j === changedIndex(i) % o.resources;
  const members = (j: number, alt: boolean) =>
    `[group:team${j}@example.com, user:u${i}-${j}-${alt ? "b" : "a"}@example.com]`;
  const out: string[] = [];
  if (o.own === "policy") {
    out.push(...head("p", "policy"), "      bindings:");
    // The policy resource's changed variant changes one of its bindings.
    for (let j = 0; j < PER_POLICY; j++)
      out.push(`        - { role: roles/bench.role${j}, members: ${members(j, changed && j === changedIndex(i))} }`);
    if (rp) out.push(`      auditConfigs: ${AUDIT}`);
    return out;
  }
  for (let j = 0; j < o.resources; j++) {
    if (o.own === "binding")
      out.push(
        ...head(`b${j}`, "binding"),
        `      role: roles/bench.role${j}`,
        `      members: ${members(j, isChanged(j))}`,
      );
    else
      out.push(
        ...head(`m${j}`, "member"),
        `      role: roles/bench.invoker${j % 2}`,
        `      member: serviceAccount:sa${i}-${j}${isChanged(j) ? "-new" : ""}@${PROJECT}.iam.gserviceaccount.com`,
      );
  }
  return out;
}

export interface Generated {
  shape: Shape;
  seed: string;
  stack: string;
  changedStack: string;
}

/** Writes seed.yaml, stack.yaml and changed/stack.yaml under `dir`. */
export function generate(dir: string, n: number, shape: Shape = shapeOf(n)): Generated {
  mkdirSync(join(dir, "changed"), { recursive: true });
  const g: Generated = {
    shape,
    seed: join(dir, "seed.yaml"),
    stack: join(dir, "stack.yaml"),
    changedStack: join(dir, "changed", "stack.yaml"),
  };
  writeFileSync(g.seed, seedYaml(shape));
  writeFileSync(g.stack, stackYaml(shape, false));
  writeFileSync(g.changedStack, stackYaml(shape, true));
  return g;
}
