// Project numbers to project IDs, before a plan reads anything. Google names one project both
// ways (`projects/123456789012/…` and `projects/my-project/…` are one object), so a stack or a
// state that spells a project by its number is resolved through Resource Manager first, and
// every name is then completed with the ID (NameDefaults.projectIds, src/cloud/names.ts): one
// read per policy, and every claim on it (of this stack's resources, or another stack's) found.
// Stacks that write project IDs (most) make no call here.
import type { Plan, State } from "../generated/schemas.js";
import type { StackModel } from "../config/model.js";
import { error, UserError, type Diagnostic } from "../diagnostics/diagnostic.js";
import { completeName, isProjectNumber, projectNumberOf, projectNumbersOf, type ProjectIds } from "../cloud/names.js";
import { stackPolicies } from "../plan/refresh.js";
import { resourceDriver } from "../drivers/registry.js";
import { extended } from "../base/extended.js";
import type { CloudPort } from "../contracts/cloud-port.js";
import type { StateStore } from "../state/store.js";

export type { ProjectIds };

/** The project numbers a plan of `stack` from `prior` meets before it evaluates anything (the
 *  provider's project, the names the stack writes literally and the state records), each with
 *  what uses it (addresses; `provider.project`), for the error when it cannot be resolved. */
export function knownProjectNumbers(stack: StackModel, prior: State | undefined): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const add = (n: string | undefined, who: string) => {
    if (n === undefined) return;
    const list = uses.get(n) ?? [];
    if (list.length < 6 && !list.includes(who)) list.push(who);
    uses.set(n, list);
  };
  if (stack.provider.project && isProjectNumber(stack.provider.project))
    add(stack.provider.project, "provider.project");
  for (const p of stackPolicies(stack)) add(projectNumberOf(p.name), p.address);
  for (const r of prior?.resources ?? [])
    if (typeof r.inputs.name === "string") add(projectNumberOf(r.inputs.name), `${r.address} (in the state)`);
  return uses;
}

/**
 * `known` with the IDs of `numbers` it lacks, asked of Resource Manager (all at once: a stack
 * names few projects). A number that cannot be resolved is a UserError naming what uses it:
 * without its ID converge cannot tell which other names designate the same policy.
 */
export async function resolveProjectNumbers(
  cloud: CloudPort,
  numbers: Iterable<string>,
  known: ProjectIds = new Map(),
  signal?: AbortSignal,
  uses?: ReadonlyMap<string, readonly string[]>,
): Promise<ProjectIds> {
  const missing = [...numbers].filter((n) => !known.has(n));
  if (!missing.length || !cloud.getProject) return known;
  const ids = new Map(known);
  const problems: Diagnostic[] = [];
  await Promise.all(
    missing.map(async (n) => {
      try {
        const p = await cloud.getProject!(n, signal);
        if (p.number !== n)
          throw new Error(
            `Resource Manager answered project ${p.projectId} with number ${p.number} when asked for ${n}`,
          );
        ids.set(n, p.projectId);
      } catch (e) {
        problems.push(unresolved(n, e, uses?.get(n)));
      }
    }),
  );
  if (problems.length) throw new UserError(problems.sort((a, b) => (a.summary < b.summary ? -1 : 1)));
  return ids;
}

function unresolved(n: string, e: unknown, users: readonly string[] | undefined): Diagnostic {
  const why = e instanceof Error ? e.message : String(e);
  const by = users?.length
    ? ` (used by ${users.length > 5 ? `${users.slice(0, 5).join(", ")} and more` : users.join(", ")})`
    : "";
  return error(`cannot find the project ID of project number ${n}${by}`, {
    code: "cloud/project-number",
    detail:
      `${why}\n` +
      "Google names a project by its number and by its ID; converge completes every name with the ID, so " +
      "that two names of one object are one policy to read, plan and claim. " +
      `Nothing was read or written. Write the project ID instead of ${n} (\`gcloud projects describe ${n}\` ` +
      `shows it), or let the caller read the project (resourcemanager.projects.get, e.g. roles/browser).`,
  });
}

/** `prior` with each resource's object named by its project ID (the state may record numbers:
 *  it was written by the stack as it then spelled them, or by an older converge). */
export function priorWithProjectIds(prior: State | undefined, ids: ProjectIds): State | undefined {
  if (!prior || !ids.size) return prior;
  let changed = false;
  const resources = prior.resources.map((r) => {
    const d = resourceDriver(r.type);
    const name = r.inputs.name;
    if (!d || typeof name !== "string") return r;
    const named = completeName(d.kind, name, { projectIds: ids });
    if (typeof named === "string" || named.full === name) return r;
    changed = true;
    const inputs = extended(r.inputs, { name: named.full });
    const etag = typeof r.outputs?.etag === "string" ? r.outputs.etag : "";
    return extended(r, { inputs, outputs: d.outputs(inputs as never, etag) });
  });
  return changed ? extended(prior, { resources }) : prior;
}

/** The project numbers of the names `plan` read or planned that `ids` does not know (names
 *  computed while planning: an input's or a data source's value). */
export function lateProjectNumbers(plan: Plan, ids: ProjectIds): Set<string> {
  const names: string[] = plan.policies.map((p) => p.name);
  for (const c of plan.resource_changes) {
    for (const v of [c.change.before, c.change.after]) {
      const name = v && typeof v === "object" ? (v as { name?: unknown }).name : undefined;
      if (typeof name === "string") names.push(name);
    }
  }
  const out = new Set<string>();
  for (const n of projectNumbersOf(names)) if (!ids.has(n)) out.add(n);
  return out;
}

/**
 * `ids` with the IDs of the project numbers other stacks' claims name (`ClaimRegistry.projectNumbers`:
 * claims recorded before numbers were resolved), so that they are compared as their IDs'. Those
 * Resource Manager cannot answer are left out: they are another stack's names, not this plan's.
 */
export async function claimProjectIds(
  store: StateStore,
  cloud: CloudPort,
  ids: ProjectIds,
  signal?: AbortSignal,
): Promise<ProjectIds> {
  const numbers = (await store.claims?.projectNumbers()) ?? [];
  const missing = numbers.filter((n) => !ids.has(n));
  if (!missing.length || !cloud.getProject) return ids;
  const out = new Map(ids);
  await Promise.all(
    missing.map(async (n) => {
      const p = await cloud.getProject!(n, signal).catch(() => undefined);
      if (p?.number === n) out.set(n, p.projectId);
    }),
  );
  return out;
}
