// Import generation: a stack that adopts what already exists, written from live policies (`import
// --generate`, `query --generate`, `drift --adopt`) or from another tool's state (`import
// --from-pulumi|--from-terraform`). Pure: the policies are read by the caller (readPolicies below,
// through the cloud port) and the file is written by the command.
import { UserError } from "../diagnostics/diagnostic.js";
import { kindOfName, parseFullName } from "../cloud/names.js";
import { isPolicyKind, type PolicyKind } from "../gcp/object-kinds.js";
import { adoptingDriver } from "../drivers/registry.js";
import { canonicalBindings } from "../iam/policy.js";
import type { IamDriver, Ownership } from "../drivers/types.js";
import type { Policy } from "../generated/schemas.js";
import { normalizeMembers } from "../iam/members.js";
import { canonicalCondition } from "../iam/conditions.js";
import { escapeLiteral } from "../language/expressions.js";
import type { CloudPort } from "../contracts/cloud-port.js";

/** A readable, unique resource name: nightly_gkebackup_viewer, churn_aiplatform_user_dana… */
function readableName(parts: string[], used: Set<string>): string {
  const base = parts
    .map((p) =>
      p
        .replace(/^roles\//, "")
        .replace(/@.*$/, "")
        .replace(/^[a-zA-Z]+:/, ""),
    )
    .join("_")
    .replace(/[^A-Za-z0-9_]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^_|_$/g, "")
    .replace(/^(\d)/, "_$1");
  let name = base || "grant";
  for (let i = 2; used.has(name); i++) name = `${base}_${i}`;
  used.add(name);
  return name;
}

/** `value` with every string escaped for a stack's properties, which are interpolated. */
function literal<T>(value: T): T {
  if (typeof value === "string") return escapeLiteral(value) as T;
  if (Array.isArray(value)) return value.map(literal) as T;
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v)])) as T;
  return value;
}

/** Two bindings of one role whose conditions share a title cannot be told apart by an import ID. */
function checkConditionTitles(name: string, policy: Policy): void {
  const titles = new Map<string, string>();
  for (const b of policy.bindings ?? []) {
    if (!b.condition) continue;
    const k = `${b.role}\u0000${b.condition.title}`;
    if (titles.has(k) && titles.get(k) !== b.condition.expression) {
      throw new UserError({
        severity: "error",
        summary: `${name}: two ${b.role} bindings have the condition title "${b.condition.title}"`,
        detail:
          "Import IDs name a condition by its title, so these bindings cannot be adopted " +
          "unambiguously. Give the conditions distinct titles first.",
      });
    }
    titles.set(k, b.condition.expression);
  }
}

/** The resources that adopt one policy: one whole-policy resource, one per binding, or one per member. */
function adoptingResources(
  name: string,
  policy: Policy,
  driver: IamDriver,
  used: Set<string>,
  group = false,
): [string, unknown][] {
  const short = name.split("/").pop()!;
  if (driver.ownership === "policy") {
    const bindings = canonicalBindings(policy.bindings ?? []);
    const audit = policy.auditConfigs?.length ? { auditConfigs: policy.auditConfigs } : {};
    return [
      [
        readableName([short, "policy"], used),
        { type: driver.token, properties: literal({ name, bindings, ...audit }), options: { import: name } },
      ],
    ];
  }
  checkConditionTitles(name, policy);
  const out: [string, unknown][] = [];
  // A binding without members grants nothing: there is nothing to adopt.
  for (const b of (policy.bindings ?? []).filter((x) => x.members.length > 0)) {
    const condition = canonicalCondition(b.condition);
    const cond = condition ? { condition } : {};
    const title = condition ? ` ${condition.title}` : "";
    const titled = condition ? [condition.title] : [];
    if (driver.ownership === "binding") {
      out.push([
        readableName([short, b.role, ...titled], used),
        {
          type: driver.token,
          properties: literal({ name, role: b.role, members: normalizeMembers(b.members), ...cond }),
          options: { import: `${name} ${b.role}${title}` },
        },
      ]);
      continue;
    }
    if (group) {
      // One member resource per binding, an instance per member (options.forEach).
      const forEach = literal(normalizeMembers(b.members));
      out.push([
        readableName([short, b.role, ...titled], used),
        {
          type: driver.token,
          properties: { ...literal({ name, role: b.role }), member: "${each.value}", ...literal(cond) },
          options: { forEach, import: `${escapeLiteral(`${name} ${b.role} `)}\${each.value}${escapeLiteral(title)}` },
        },
      ]);
      continue;
    }
    for (const m of normalizeMembers(b.members)) {
      out.push([
        readableName([short, b.role, m, ...titled], used),
        {
          type: driver.token,
          properties: literal({ name, role: b.role, member: m, ...cond }),
          options: { import: `${name} ${b.role} ${m}${title}` },
        },
      ]);
    }
  }
  return out;
}

/** Builds a stack that adopts every binding of the given policies, as whole-policy, binding
 *  (the default) or member resources. Pure. */
export function generateStack(
  stackName: string,
  endpoint: string,
  policies: { name: string; policy: Policy }[],
  as: Ownership = "binding",
  group = false,
  seed?: string,
): Record<string, unknown> {
  const resources: Record<string, unknown> = {};
  const used = new Set<string>();
  for (const { name, policy } of policies) {
    const kind = kindOfName(name);
    if (!isPolicyKind(kind)) throw new Error(`generateStack: ${name} is not the name of an object with a policy`);
    for (const [key, value] of adoptingResources(name, policy, adoptingDriver(kind, as), used, group))
      resources[key] = value;
  }
  const n = policies.length;
  const description = `Adopted by converge import --generate from ${n} ${n === 1 ? "policy" : "policies"}`;
  return stackDocument({ name: stackName, description, endpoint, seed, firstName: policies[0]?.name, resources });
}

/** A generated stack: its name, a provider block (the first object's project and location, the
 *  endpoint unless google, the seed), config inputs when any, and the resources. Pure. */
export function stackDocument(s: {
  name: string;
  description: string;
  endpoint: string;
  seed?: string | undefined;
  firstName?: string | undefined;
  config?: Record<string, unknown>;
  resources: Record<string, unknown>;
}): Record<string, unknown> {
  const kind = s.firstName !== undefined ? kindOfName(s.firstName) : undefined;
  const first = s.firstName !== undefined && isPolicyKind(kind) ? parseFullName(kind, s.firstName) : undefined;
  return {
    name: s.name,
    description: s.description,
    provider: {
      ...(first ? { project: first.project, location: first.location } : {}),
      ...(s.endpoint !== "google" ? { endpoint: s.endpoint } : {}),
      ...(s.seed !== undefined ? { seed: s.seed } : {}),
    },
    ...(s.config && Object.keys(s.config).length > 0 ? { config: s.config } : {}),
    resources: s.resources,
  };
}

/** The live policy of each named object (full names of objects with a policy), one read each, in
 *  order; a user error for one that does not exist. `reading` bounds each read (a deadline). */
export async function readPolicies(
  port: CloudPort,
  names: readonly string[],
  reading: <T>(read: (signal: AbortSignal | undefined) => Promise<T>) => Promise<T>,
): Promise<{ name: string; policy: Policy }[]> {
  const policies = [];
  for (const full of names) {
    const kind = kindOfName(full) as PolicyKind;
    const policy = await reading((signal) => port.getIamPolicy(kind, full, signal));
    if (!policy) throw new UserError({ severity: "error", summary: `${full} does not exist` });
    policies.push({ name: full, policy });
  }
  return policies;
}
