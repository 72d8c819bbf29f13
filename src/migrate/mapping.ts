// Which converge type a resource of another tool's state is, and its properties and import ID:
// Pulumi's google-native tokens (and the seed's, which are converge's), the Pulumi gcp provider's
// and the Terraform google provider's IAM types for restore plans and Vertex AI endpoints.
import {
  ENDPOINT_IAM_BINDING,
  ENDPOINT_IAM_MEMBER,
  ENDPOINT_IAM_POLICY,
  RESTORE_PLAN_IAM_BINDING,
  RESTORE_PLAN_IAM_MEMBER,
  RESTORE_PLAN_IAM_POLICY,
} from "../drivers/registry.js";
import { objectOf } from "./file.js";
import { SecretValue, type SourceResource } from "./model.js";

type Ownership = "policy" | "binding" | "member";
type ObjectType = "restorePlan" | "endpoint";

/** A piece of an import ID: a literal, a secret (an input), or a field of a secret map. */
export type ImportPiece = string | SecretValue | { of: SecretValue; field: string };

export interface Mapped {
  token: string;
  properties: Record<string, unknown>;
  importId: ImportPiece[];
}

/** How one source type is read: the converge type it is, and its properties' names there. */
interface Shape {
  object: ObjectType;
  as: Ownership;
  /** "native": full `name` (and a policy's {object}Id, project, location); "terraform": name or
   *  endpoint, project, location, condition as a one-element list, policy_data. */
  style: "native" | "terraform";
}

const TOKENS: Record<ObjectType, Record<Ownership, string>> = {
  restorePlan: { policy: RESTORE_PLAN_IAM_POLICY, binding: RESTORE_PLAN_IAM_BINDING, member: RESTORE_PLAN_IAM_MEMBER },
  endpoint: { policy: ENDPOINT_IAM_POLICY, binding: ENDPOINT_IAM_BINDING, member: ENDPOINT_IAM_MEMBER },
};
const COLLECTION: Record<ObjectType, string> = { restorePlan: "restorePlans", endpoint: "endpoints" };
const OWNERSHIPS: [Ownership, string][] = [
  ["policy", "Policy"],
  ["binding", "Binding"],
  ["member", "Member"],
];

/** Every source type converge adopts, by its name in the source. */
const SOURCE_TYPES: ReadonlyMap<string, Shape> = new Map(
  OWNERSHIPS.flatMap(([as, suffix]): [string, Shape][] => [
    [`google-native:gkebackup/v1:RestorePlanIam${suffix}`, { object: "restorePlan", as, style: "native" }],
    [`google-native:aiplatform/v1beta1:EndpointIam${suffix}`, { object: "endpoint", as, style: "native" }],
    [TOKENS.restorePlan[as], { object: "restorePlan", as, style: "native" }],
    [TOKENS.endpoint[as], { object: "endpoint", as, style: "native" }],
    [
      `gcp:gkebackup/restorePlanIam${suffix}:RestorePlanIam${suffix}`,
      { object: "restorePlan", as, style: "terraform" },
    ],
    [`gcp:vertex/aiEndpointIam${suffix}:AiEndpointIam${suffix}`, { object: "endpoint", as, style: "terraform" }],
    [`google_gke_backup_restore_plan_iam_${as}`, { object: "restorePlan", as, style: "terraform" }],
    [`google_vertex_ai_endpoint_iam_${as}`, { object: "endpoint", as, style: "terraform" }],
  ]),
);

const isText = (v: unknown): v is string | SecretValue =>
  (typeof v === "string" && v !== "") || v instanceof SecretValue;

/** The object's full name: as given when full (or secret), else from project and location. */
function fullName(shape: Shape, p: Record<string, unknown>): string | SecretValue | undefined {
  const id =
    shape.style === "native"
      ? shape.as === "policy"
        ? p[`${shape.object}Id`]
        : p.name
      : shape.object === "endpoint"
        ? p.endpoint
        : p.name;
  if (!isText(id)) return undefined;
  if (id instanceof SecretValue || id.startsWith("projects/")) return id;
  const { project, location } = p;
  if (project instanceof SecretValue || location instanceof SecretValue) return new SecretValue("string");
  if (typeof project === "string" && typeof location === "string")
    return `projects/${project}/locations/${location}/${COLLECTION[shape.object]}/${id}`;
  // A short name: the stack's provider.project and provider.location complete it.
  return id;
}

/** A condition as converge's: a one-element list in Terraform's state, an empty description dropped. */
function conditionOf(v: unknown): unknown {
  const c = Array.isArray(v) ? v[0] : v;
  if (c instanceof SecretValue) return c;
  const o = objectOf(c);
  if (!o || (o.title === undefined && o.expression === undefined)) return undefined;
  const out: Record<string, unknown> = { title: o.title, expression: o.expression };
  if (o.description !== undefined && o.description !== null && o.description !== "") out.description = o.description;
  return out;
}

function titlePiece(condition: unknown): ImportPiece[] {
  if (condition === undefined) return [];
  if (condition instanceof SecretValue) return [{ of: condition, field: "title" }];
  const title = (condition as Record<string, unknown>).title;
  return [title instanceof SecretValue ? title : String(title)];
}

/** A whole-policy resource's bindings and audit configs (Terraform's policy_data is their JSON). */
function policyProperties(shape: Shape, p: Record<string, unknown>): Record<string, unknown> | string {
  let policy: Record<string, unknown> = p;
  if (shape.style === "terraform") {
    const data = p.policy_data ?? p.policyData;
    if (data instanceof SecretValue) return { bindings: new SecretValue("list") };
    try {
      policy = objectOf(JSON.parse(String(data))) ?? {};
    } catch {
      return "its policy_data is not a policy's JSON";
    }
  }
  const bindings = Array.isArray(policy.bindings)
    ? policy.bindings.map((b) => {
        const o = objectOf(b);
        const condition = o ? conditionOf(o.condition) : undefined;
        return o ? { role: o.role, members: o.members, ...(condition !== undefined ? { condition } : {}) } : b;
      })
    : policy.bindings instanceof SecretValue
      ? policy.bindings
      : [];
  const audit =
    shape.object === "restorePlan" && policy.auditConfigs !== undefined ? { auditConfigs: policy.auditConfigs } : {};
  return { bindings, ...audit };
}

/** The converge resource a source resource is, or why it is none. */
export function mapResource(r: SourceResource): Mapped | { reason: string } {
  if (r.skip) return { reason: r.skip };
  const shape = SOURCE_TYPES.get(r.type);
  if (!shape)
    return {
      reason: `converge has no type for ${r.type}: it manages the IAM policies of restore plans and endpoints`,
    };
  const p = r.properties;
  const name = fullName(shape, p);
  if (name === undefined) return { reason: `it names no ${shape.object === "endpoint" ? "endpoint" : "restore plan"}` };
  const token = TOKENS[shape.object][shape.as];
  if (shape.as === "policy") {
    const props = policyProperties(shape, p);
    return typeof props === "string" ? { reason: props } : { token, properties: { name, ...props }, importId: [name] };
  }
  if (!isText(p.role)) return { reason: "it has no role" };
  const condition = conditionOf(p.condition);
  const cond = condition !== undefined ? { condition } : {};
  if (shape.as === "binding") {
    if (!Array.isArray(p.members) && !(p.members instanceof SecretValue)) return { reason: "it has no members" };
    return {
      token,
      properties: { name, role: p.role, members: p.members, ...cond },
      importId: [name, p.role, ...titlePiece(condition)],
    };
  }
  if (!isText(p.member)) return { reason: "it has no member" };
  return {
    token,
    properties: { name, role: p.role, member: p.member, ...cond },
    importId: [name, p.role, p.member, ...titlePiece(condition)],
  };
}
