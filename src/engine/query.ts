// The `query` operation: discovery (./discover.ts) against the cloud a stack uses (or an endpoint
// given without a stack), with the grants its state manages marked. Read-only: no lock is taken,
// the state is only read, nothing is written to the cloud.
import { openCloud } from "../connect/cloud.js";
import type { Emit } from "../contracts/events.js";
import type { RateTable } from "../cloud/rate-limit.js";
import { stateClaims, type ResourceClaim } from "../claims/claims.js";
import { checkDiscoverRequest, discover, type DiscoverRequest, type DiscoveryReport } from "./discover.js";
import type { StackSession } from "./session.js";
import { resolveProjectNumbers } from "./project-ids.js";
import { isProjectNumber } from "../cloud/names.js";

export interface QueryRequest extends DiscoverRequest {
  callTimeoutMs?: number | undefined;
  rates?: RateTable | undefined;
}

/** Where discovery reads: a stack's cloud and state, or an endpoint alone (nothing is managed). */
export type QueryTarget =
  { session: StackSession } | { endpoint: string; seed?: string | undefined; stateDir: string; stackName: string };

export interface QueryResult {
  report: DiscoveryReport;
  /** The stack and workspace whose state marked the managed grants; undefined without a stack. */
  managedBy?: { stack: string; workspace: string; resources: number };
  /** Where the calls went, for people ("Google APIs", "embedded emulator"…). */
  target: string;
}

/** `query`: lists and reads; the state's claims say which grants are managed. */
export async function queryProject(
  target: QueryTarget,
  req: QueryRequest,
  emit: Emit,
  signal?: AbortSignal,
): Promise<QueryResult> {
  checkDiscoverRequest(req);
  let claims: ResourceClaim[] = [];
  let managedBy: QueryResult["managedBy"];
  if ("session" in target) {
    const { session } = target;
    const state = await session.store.read();
    claims = state ? stateClaims(state) : [];
    managedBy = { stack: session.stack.name, workspace: session.workspace, resources: state?.resources.length ?? 0 };
  }
  const provider =
    "session" in target
      ? target.session.stack.provider
      : { endpoint: target.endpoint, ...(target.seed !== undefined ? { seed: target.seed } : {}) };
  const where =
    "session" in target
      ? { stateDir: target.session.stateDir, stackName: target.session.stack.name }
      : { stateDir: target.stateDir, stackName: target.stackName };
  const options = { ...(req.callTimeoutMs !== undefined ? { callTimeoutMs: req.callTimeoutMs } : {}) };
  const cloud = await openCloud(provider, { ...where, emit, ...options, ...(req.rates ? { rates: req.rates } : {}) });
  try {
    // A project number is asked its ID: converge names objects by the ID, as the stack's claims do.
    const ids = isProjectNumber(req.project)
      ? await resolveProjectNumbers(cloud.port, [req.project], undefined, signal)
      : undefined;
    const project = ids?.get(req.project) ?? req.project;
    const report = await discover(cloud.port, { ...req, project }, claims, signal);
    return { report, target: cloud.target, ...(managedBy ? { managedBy } : {}) };
  } finally {
    await cloud.close();
  }
}
