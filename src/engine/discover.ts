// Discovery (`converge query`): which restore plans and endpoints a project has, their policies,
// and which of their grants a stack's state already manages. Read-only, for every front end: the
// lists are followed page by page (projects.locations.list when no location is given), each
// object's policy is read once with bounded parallelism, and the state is read without a lock.
// The chosen objects can be adopted by a generated stack (`--generate`, ../cli/commands/query.ts).
import pLimit from "p-limit";
import picomatch from "picomatch";
import { error, UserError } from "../diagnostics/diagnostic.js";
import type { CloudPort } from "../contracts/cloud-port.js";
import type { Condition, Policy } from "../generated/schemas.js";
import { kindLabel, OBJECT_KINDS, POLICY_KINDS, SEGMENT, type PolicyKind } from "../gcp/object-kinds.js";
import { conditionKey } from "../iam/conditions.js";
import { memberKey, normalizeMembers } from "../iam/members.js";
import type { ResourceClaim } from "../claims/claims.js";

export interface DiscoverRequest {
  project: string;
  /** The locations to list; none: every location each service lists for the project. */
  locations: readonly string[];
  /** The kinds to list (--kind); none: both. */
  kinds: readonly PolicyKind[];
  /** Only objects whose full name or ID matches this glob (--name-glob). */
  nameGlob?: string | undefined;
  /** Only grants of roles matching this glob (--role); objects left without one are left out. */
  role?: string | undefined;
  /** Concurrent policy reads. */
  parallelism: number;
}

export interface DiscoveredGrant {
  role: string;
  member: string;
  condition?: Condition;
  /** The addresses of the state's resources whose claims cover the grant; none: unmanaged. */
  managedBy: string[];
}

export interface DiscoveredObject {
  kind: PolicyKind;
  name: string;
  location: string;
  /** The policy as read; undefined when the object was gone by the time it was read. */
  policy: Policy | undefined;
  grants: DiscoveredGrant[];
}

export interface DiscoveryReport {
  project: string;
  /** The locations listed, by kind. */
  locations: Partial<Record<PolicyKind, string[]>>;
  /** How many objects the lists answered (before --name-glob and --role). */
  listed: number;
  /** The chosen objects, by name. */
  objects: DiscoveredObject[];
}

const KIND_NAMES = POLICY_KINDS.map((k) => OBJECT_KINDS[k].collection);

/** A policy kind from its collection name or its kind name (restorePlans, restorePlan, endpoints…). */
export function kindOf(text: string): PolicyKind {
  const k = POLICY_KINDS.find((p) => p === text || OBJECT_KINDS[p].collection === text);
  if (k) return k;
  throw new UserError(error(`--kind takes ${KIND_NAMES.join(" or ")}, got "${text}"`));
}

function glob(option: string, pattern: string): (s: string) => boolean {
  if (pattern === "") throw new UserError(error(`${option} needs a pattern`));
  try {
    return picomatch(pattern, { strictBrackets: true, dot: true });
  } catch (e) {
    throw new UserError(error(`${option} "${pattern}" is not a valid glob: ${(e as Error).message}`));
  }
}

interface Filters {
  name: (name: string) => boolean;
  role: (role: string) => boolean;
}

/** Checks the request before anything is sent: a bad project, location or glob is the user's. */
export function checkDiscoverRequest(req: DiscoverRequest): Filters {
  if (!req.project) throw new UserError(error("query needs --project PROJECT (a project ID or number)"));
  for (const [what, s] of [["--project", req.project], ...req.locations.map((l) => ["--location", l])] as const) {
    if (!SEGMENT.test(s)) throw new UserError(error(`${what} "${s}" is not a project or location ID`));
  }
  const byName = req.nameGlob !== undefined ? glob("--name-glob", req.nameGlob) : undefined;
  const byRole = req.role !== undefined ? glob("--role", req.role) : undefined;
  return {
    // A glob with a "/" matches the full name; one without, the object's ID.
    name: (n) => !byName || byName(req.nameGlob!.includes("/") ? n : n.slice(n.lastIndexOf("/") + 1)),
    role: (r) => !byRole || byRole(r),
  };
}

/** The addresses whose claims cover one grant of `object`. */
function managers(claims: readonly ResourceClaim[], object: string, g: Omit<DiscoveredGrant, "managedBy">): string[] {
  const out = new Set<string>();
  const cond = conditionKey(g.condition);
  for (const { address, claim: c } of claims) {
    if (c.object !== object) continue;
    if (c.scope !== "policy" && (c.role !== g.role || conditionKey(c.condition) !== cond)) continue;
    if (c.scope === "member" && memberKey(c.member) !== memberKey(g.member)) continue;
    out.add(address);
  }
  return [...out].sort();
}

function grantsOf(name: string, policy: Policy | undefined, claims: readonly ResourceClaim[], f: Filters) {
  const out: DiscoveredGrant[] = [];
  for (const b of policy?.bindings ?? []) {
    if (!f.role(b.role)) continue;
    for (const member of normalizeMembers(b.members)) {
      const g = { role: b.role, member, ...(b.condition ? { condition: b.condition } : {}) };
      out.push({ ...g, managedBy: managers(claims, name, g) });
    }
  }
  return out;
}

/** The locations to list for `kind`: those asked for, or every one its service lists. */
async function locationsOf(port: CloudPort, kind: PolicyKind, req: DiscoverRequest, signal?: AbortSignal) {
  if (req.locations.length > 0) return [...req.locations];
  return (await port.listLocations!(kind, req.project, signal)).sort();
}

/** Lists, reads and classifies; throws the first failed call's error (the caller reports it). */
export async function discover(
  port: CloudPort,
  req: DiscoverRequest,
  claims: readonly ResourceClaim[],
  signal?: AbortSignal,
): Promise<DiscoveryReport> {
  const filters = checkDiscoverRequest(req);
  if (!port.listObjects || !port.listLocations) throw new Error("discover: the cloud port cannot list objects");
  const kinds = req.kinds.length > 0 ? req.kinds : POLICY_KINDS;
  const limit = pLimit(req.parallelism);
  const report: DiscoveryReport = { project: req.project, locations: {}, listed: 0, objects: [] };
  const found: { kind: PolicyKind; name: string; location: string }[] = [];
  for (const kind of kinds) {
    const locations = await locationsOf(port, kind, req, signal);
    report.locations[kind] = locations;
    const lists = locations.map((location) =>
      limit(async () =>
        (await port.listObjects!(kind, req.project, location, signal)).map((name) => ({ kind, name, location })),
      ),
    );
    for (const list of await Promise.all(lists)) {
      report.listed += list.length;
      for (const o of list) if (filters.name(o.name)) found.push(o);
    }
  }
  const read = found.map((o) =>
    limit(async () => {
      const policy = await port.getIamPolicy(o.kind, o.name, signal);
      return { ...o, policy, grants: grantsOf(o.name, policy, claims, filters) };
    }),
  );
  const objects = await Promise.all(read);
  report.objects = objects
    .filter((o) => req.role === undefined || o.grants.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return report;
}

/** "2 restore plans", "1 endpoint". */
export function countOf(kind: PolicyKind, n: number): string {
  return `${n} ${kindLabel(kind)}${n === 1 ? "" : "s"}`;
}

/** What a generated stack adopts of the chosen objects: their unmanaged grants, as policies of
 *  `generateStack`'s input. A resource of the new stack must not claim what the state's resources
 *  already claim, so with `binding` a binding with a managed member is left out whole, and with
 *  `policy` an object with any managed grant; `skipped` counts the grants so left out. */
export function adoptablePolicies(
  report: DiscoveryReport,
  as: "policy" | "binding" | "member",
): { policies: { name: string; policy: Policy }[]; skipped: number } {
  const policies: { name: string; policy: Policy }[] = [];
  let skipped = 0;
  for (const o of report.objects) {
    const managed = o.grants.filter((g) => g.managedBy.length > 0);
    if (as === "policy" && managed.length > 0) {
      skipped += o.grants.length - managed.length;
      continue;
    }
    const held = new Set(managed.map((g) => `${g.role}\u0000${conditionKey(g.condition)}`));
    const bindings = new Map<string, { role: string; members: string[]; condition?: Condition }>();
    for (const g of o.grants) {
      if (g.managedBy.length > 0) continue;
      const key = `${g.role}\u0000${conditionKey(g.condition)}`;
      if (as === "binding" && held.has(key)) {
        skipped++;
        continue;
      }
      const b = bindings.get(key) ?? { role: g.role, members: [], ...(g.condition ? { condition: g.condition } : {}) };
      b.members.push(g.member);
      bindings.set(key, b);
    }
    if (bindings.size > 0) policies.push({ name: o.name, policy: { bindings: [...bindings.values()] } });
  }
  return { policies, skipped };
}
