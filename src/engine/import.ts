// `import ADDRESS ID`: adopts an existing grant into the state under a resource of the stack,
// reading its policy and writing only the state (nothing to the cloud). The CLI and the
// Automation API (src/automation/automation.ts) both call it, holding the state lock around it.
import { addressText } from "../diagnostics/listed.js";
import type { RateTable } from "../cloud/rate-limit.js";
import { checkResourceClaims } from "./claims-check.js";
import { claimsOfValue } from "../claims/claims.js";
import { UserError } from "../diagnostics/diagnostic.js";
import type { Policy } from "../generated/schemas.js";
import { newState, versionOf } from "../state/index.js";
import { openCloud } from "../connect/cloud.js";
import { claimProjectIds, resolveProjectNumbers } from "./project-ids.js";
import { completeName, projectNumbersOf, type ProjectIds } from "../cloud/names.js";
import type { Emit } from "../contracts/events.js";
import type { StackSession } from "./session.js";

export interface ImportRequest {
  callTimeoutMs: number;
  /** Request rates per service (--rate). */
  rates?: RateTable;
  emit?: Emit;
  /** Wraps the policy read (the CLI's --timeout abandons it). */
  reading?: <T>(read: (signal: AbortSignal | undefined) => Promise<T>) => Promise<T>;
}

/** Where `address`'s ID points, checked before the lock is taken. */
export function importTarget(session: StackSession, address: string, id: string) {
  const decl = session.stack.resources.get(address);
  if (!decl) {
    throw new UserError({
      severity: "error",
      summary: `no resource ${addressText(address)} in ${session.stack.file}`,
      detail: "Declare the resource in the stack first; import records it in the state under that address.",
    });
  }
  const defaults = { project: session.stack.provider.project, location: session.stack.provider.location };
  const target = decl.driver.parseImportId(id, defaults);
  if (typeof target === "string") throw new UserError({ severity: "error", summary: `${address}: ${target}`, address });
  return { decl, target };
}

/** Records the grant `id` in the state as `address` (call it holding the state lock). */
export async function importResource(
  session: StackSession,
  address: string,
  id: string,
  req: ImportRequest,
): Promise<{ id: string; serial: number }> {
  const { decl, target } = importTarget(session, address, id);
  const d = decl.driver;
  const prior = await session.store.read();
  const state = prior ?? newState(session.stack.name);
  if (state.resources.some((r) => r.address === address)) {
    throw new UserError({
      severity: "error",
      summary: `${address} is already in the state`,
      detail: "To import it again, first forget it with `converge state rm " + address + "`.",
    });
  }
  const cloud = await openCloud(session.stack.provider, {
    stateDir: session.stateDir,
    stackName: session.stack.name,
    ...(req.emit ? { emit: req.emit } : {}),
    callTimeoutMs: req.callTimeoutMs,
    ...(req.rates ? { rates: req.rates } : {}),
  });
  let policy: Policy | undefined;
  let claimIds: ProjectIds = new Map();
  try {
    // An ID that spells the project by its number is recorded with the project's ID, as a plan names it
    // (./project-ids.ts).
    const ids = await resolveProjectNumbers(cloud.port, projectNumbersOf([target.name]));
    const named = completeName(d.kind, target.name, { projectIds: ids });
    if (typeof named !== "string") target.name = named.full;
    claimIds = await claimProjectIds(session.store, cloud.port, ids);
    const read = (signal: AbortSignal | undefined) => cloud.port.getIamPolicy(d.kind, target.name, signal);
    policy = await (req.reading ? req.reading(read) : read(undefined));
  } finally {
    await cloud.close();
  }
  if (!policy)
    throw new UserError({
      severity: "error",
      summary: `${address}: cannot import: ${target.name} does not exist`,
      address,
    });
  const adopted = d.adopt(target, policy);
  if (typeof adopted === "string")
    throw new UserError({ severity: "error", summary: `${address}: cannot import "${id}": ${adopted}`, address });
  const outputs = d.outputs(adopted, policy.etag ?? "");
  // A grant another stack (or workspace) manages is not adopted here too.
  await checkResourceClaims(session.store, claimsOfValue(d.token, address, outputs), claimIds);
  state.resources.push({
    address,
    type: d.token,
    id: d.id(adopted),
    inputs: adopted as unknown as Record<string, unknown>,
    outputs,
    dependencies: session.stack.graph.dependencies(address),
    ...(decl.options.protect ? { protect: true } : {}),
  });
  const written = await session.store.write(state, versionOf(prior));
  return { id: d.id(adopted), serial: written.serial };
}
