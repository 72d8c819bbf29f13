// Typed REST client for the five operations converge performs (SPEC section 2).
import type { Federation, Policy } from "../generated/schemas.js";
import { createTokenProvider, type TokenProvider } from "./auth.js";
import { EMULATOR_HOST_ENV, resolveEndpoint, type ResolvedEndpoint, type Service } from "./endpoint.js";
import { CloudError, userinfoSecrets } from "./errors.js";
import { checkProxyFor, proxySecrets } from "./proxy.js";
import { federationProblem, policyProblem, projectProblem } from "./wire-shape.js";
import { apiMethod, OBJECT_KINDS, POLICY_KINDS, policyMethodId, type PolicyKind } from "../gcp/object-kinds.js";
import { PROJECTS_GET } from "../gcp/projects-api.js";
import { LIST_METHODS, LOCATION_LISTS } from "../gcp/list-methods.js";
import { listAll } from "./list-pages.js";
import { parseFullName, SEGMENT, type ObjectKind } from "./names.js";
import { defaultSleep, type RetryOptions } from "./retry.js";
import { GOOGLE_DEFAULT_RATES, type LimiterClock, RateLimiter, type RateTable } from "./rate-limit.js";
import type { HttpFn } from "./http.js";
import { createWorkerHttp, type WorkerHttp } from "./worker-http.js";
import { Transport } from "./transport.js";
import type { CloudEvent } from "./cloud-events.js";

export type { CloudEvent, AttemptEvent, PolicyRoundEvent } from "./cloud-events.js";
export type { PolicyKind };

export interface CloudClientOptions {
  /** "google" (default) or "http(s)://host:port". CLOUDNATIVE_EMULATOR_HOST in `env` wins over it. */
  endpoint?: string;
  /** Environment for endpoint and token lookup; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Per-attempt timeout (ms); default 30 s. */
  timeoutMs?: number;
  /** Total deadline of each call, retries included (ms); default 2 minutes. */
  callTimeoutMs?: number;
  retry?: Partial<RetryOptions>;
  onEvent?: (e: CloudEvent) => void;
  fetch?: HttpFn;
  /** Overrides the token lookup (tests, or a caller with its own credentials). */
  tokens?: TokenProvider;
  /** Clock for elapsed times (tests). */
  now?: () => number;
  /** Requests per minute by service (`--rate`), over the defaults (GOOGLE_DEFAULT_RATES for Google). */
  rates?: RateTable;
  /** The pacing's clock: real time unless a test injects one. */
  pacingClock?: LimiterClock;
}

/**
 * setIamPolicy's field mask. Google's default is "bindings,etag"; we send it explicitly and do not
 * include auditConfigs unless the write is a policy resource's (the only one that owns them): a
 * binding or member edit can then never change them, whatever the body holds. The body still
 * carries the auditConfigs we read, so a server that ignores the mask preserves them as well.
 */
export const SET_IAM_POLICY_UPDATE_MASK = "bindings,etag";
/** The mask of a whole-policy write: the audit configs too. */
const SET_WHOLE_POLICY_UPDATE_MASK = "bindings,etag,auditConfigs";

/** Kinds whose API version has no auditConfigs in Policy and no updateMask in SetIamPolicyRequest
 *  (aiplatform v1beta1): their setIamPolicy sends the policy's bindings, version and etag only. */
const WITHOUT_AUDIT_CONFIGS: ReadonlySet<PolicyKind> = new Set(["endpoint"]);

function setIamPolicyBody(kind: PolicyKind, policy: Policy, auditConfigs?: boolean): Record<string, unknown> {
  if (!WITHOUT_AUDIT_CONFIGS.has(kind)) {
    return { policy, updateMask: auditConfigs ? SET_WHOLE_POLICY_UPDATE_MASK : SET_IAM_POLICY_UPDATE_MASK };
  }
  const { auditConfigs: _none, ...rest } = policy;
  return { policy: rest };
}

/** Per-call options. `signal`: once aborted (Ctrl-C), the call sends nothing more (see CallSpec). */
export interface CallOptions {
  signal?: AbortSignal;
}

interface PolicyApi {
  service: Service;
  version: string;
  getMethod: "GET" | "POST";
  getId: string;
  setId: string;
}

function policyApi(kind: PolicyKind): PolicyApi {
  const k = OBJECT_KINDS[kind];
  return {
    service: k.service,
    version: k.version,
    getMethod: apiMethod(kind, "getIamPolicy")!.http,
    getId: policyMethodId(kind, "getIamPolicy"),
    setId: policyMethodId(kind, "setIamPolicy"),
  };
}

const POLICY_APIS = Object.fromEntries(POLICY_KINDS.map((k) => [k, policyApi(k)])) as Record<PolicyKind, PolicyApi>;

export { policyMethodId };

const FEDERATION_GET_ID = apiMethod("federation", "get")!.id;

/** What converge reads of a project: its ID and its number. */
export interface ProjectInfo {
  projectId: string;
  number: string;
}

export class CloudClient {
  readonly endpoint: ResolvedEndpoint;
  readonly transport: Transport;
  /** The client's own HTTP (none when the caller passed `fetch`). */
  private readonly http: WorkerHttp | undefined;

  constructor(opts: CloudClientOptions = {}) {
    const env = opts.env ?? process.env;
    this.endpoint = resolveEndpoint({ endpoint: opts.endpoint, env });
    // An unusable proxy setting is found now, once, rather than by every call.
    for (const service of ["gkebackup", "metastore"] as const) checkProxyFor(this.endpoint.baseUrl(service), env);
    const tokens = opts.tokens ?? createTokenProvider({ env, google: this.endpoint.google });
    this.http = opts.fetch ? undefined : createWorkerHttp({ env });
    this.transport = new Transport({
      endpoint: this.endpoint,
      tokens,
      secrets: [...proxySecrets(env), ...userinfoSecrets(opts.endpoint), ...userinfoSecrets(env[EMULATOR_HOST_ENV])],
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.callTimeoutMs !== undefined ? { callTimeoutMs: opts.callTimeoutMs } : {}),
      ...(opts.retry ? { retry: opts.retry } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
      fetch: opts.fetch ?? this.http,
      ...(opts.now ? { now: opts.now } : {}),
      limiter: new RateLimiter(
        { ...(this.endpoint.google ? GOOGLE_DEFAULT_RATES : {}), ...opts.rates },
        opts.pacingClock ?? { now: Date.now, sleep: defaultSleep },
      ),
    });
  }

  /** This run will make at least `requests` calls: a large run moves its HTTP to the worker
   *  thread now (./worker-http.ts) instead of after its first thousands of calls. */
  expectRequests(requests: number): void {
    this.http?.expect(requests);
  }

  /** Reports an event through the client's hook (used by the policy engine). */
  emit(e: CloudEvent): void {
    this.transport.emit(e);
  }

  /** getIamPolicy with requestedPolicyVersion=3 (conditions are returned). */
  async getIamPolicy(kind: PolicyKind, name: string, opts: CallOptions = {}): Promise<Policy> {
    const api = POLICY_APIS[kind];
    const { location, project } = this.check(kind, name, api.getId, "getIamPolicy");
    return this.transport.call<Policy>({
      method: api.getMethod,
      service: api.service,
      location,
      project,
      path: `/${api.version}/${name}:getIamPolicy?options.requestedPolicyVersion=3`,
      methodId: api.getId,
      resource: name,
      operation: "getIamPolicy",
      idempotent: true,
      check: policyProblem,
      ...readSignal(opts),
    });
  }

  /** setIamPolicy; send the etag that was read so that a concurrent change fails with 409 ABORTED.
   *  `auditConfigs`: the write sets the audit configs too (a policy resource's). */
  async setIamPolicy(
    kind: PolicyKind,
    name: string,
    policy: Policy,
    opts: CallOptions & { auditConfigs?: boolean } = {},
  ): Promise<Policy> {
    const api = POLICY_APIS[kind];
    const { location, project } = this.check(kind, name, api.setId, "setIamPolicy");
    return this.transport.call<Policy>({
      method: "POST",
      service: api.service,
      location,
      project,
      write: true,
      path: `/${api.version}/${name}:setIamPolicy`,
      body: setIamPolicyBody(kind, policy, opts.auditConfigs),
      methodId: api.setId,
      resource: name,
      operation: "setIamPolicy",
      // With an etag, a repeat of a write that did happen fails ABORTED (the etag changed) and
      // the read-modify-write loop re-reads: safe to retry after a 500.
      idempotent: typeof policy.etag === "string" && policy.etag !== "",
      check: policyProblem,
      // A write already sent is never abandoned: whether it happened must be known.
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  }

  /** Reads a Dataproc Metastore federation. */
  async getFederation(name: string, opts: CallOptions = {}): Promise<Federation> {
    const { location, project } = this.check("federation", name, FEDERATION_GET_ID, "getFederation");
    return this.transport.call<Federation>({
      method: "GET",
      service: "metastore",
      location,
      project,
      path: `/v1alpha/${name}`,
      methodId: FEDERATION_GET_ID,
      resource: name,
      operation: "getFederation",
      idempotent: true,
      check: federationProblem,
      ...readSignal(opts),
    });
  }

  /** A project's ID and number, from either (Resource Manager v3; not paced: a plan asks once per
   *  project number it meets). */
  async getProject(project: string, opts: CallOptions = {}): Promise<ProjectInfo> {
    if (!SEGMENT.test(project))
      throw notSent(PROJECTS_GET.id, `projects/${project}`, "getProject", `"${project}" is not a project ID or number`);
    const p = await this.transport.call<{ projectId: string; name: string }>({
      method: PROJECTS_GET.http,
      service: PROJECTS_GET.service,
      path: `/${PROJECTS_GET.version}/projects/${project}`,
      methodId: PROJECTS_GET.id,
      resource: `projects/${project}`,
      operation: "getProject",
      idempotent: true,
      check: projectProblem,
      ...readSignal(opts),
    });
    return { projectId: p.projectId, number: p.name.slice("projects/".length) };
  }

  /** The full names of every object of `kind` in one location of a project (all pages). */
  async listObjects(kind: PolicyKind, project: string, location: string, opts: CallOptions = {}): Promise<string[]> {
    this.checkSegments(LIST_METHODS[kind].id, project, location);
    return listAll(this.transport, kind, project, location, opts.signal);
  }

  /** The IDs of the locations `kind`'s service answers for a project (projects.locations.list). */
  async listLocations(kind: PolicyKind, project: string, opts: CallOptions = {}): Promise<string[]> {
    this.checkSegments(LOCATION_LISTS[kind].id, project);
    const names = await listAll(this.transport, kind, project, undefined, opts.signal);
    return names.map((n) => n.split("/").pop()!);
  }

  private checkSegments(methodId: string, project: string, location?: string): void {
    const bad = [project, location].find((s) => s !== undefined && !SEGMENT.test(s));
    if (bad === undefined) return;
    throw notSent(methodId, `projects/${project}`, "list", `"${bad}" is not a project or location`);
  }

  /** Validates a full name before anything is sent; returns its location and project. */
  private check(
    kind: ObjectKind,
    name: string,
    methodId: string,
    operation: string,
  ): { location: string; project: string } {
    const parsed = parseFullName(kind, name);
    if (!parsed)
      throw notSent(methodId, name, operation, `"${name}" is not a full ${kind} name (${OBJECT_KINDS[kind].nameForm})`);
    return { location: parsed.location, project: parsed.project };
  }
}

/** The INVALID_ARGUMENT of a call refused before anything was sent. */
function notSent(methodId: string, resource: string, operation: string, why: string): CloudError {
  return new CloudError({
    status: "INVALID_ARGUMENT",
    httpStatus: 0,
    methodId,
    resource,
    operation,
    serverMessage: `${why}; nothing was sent`,
    attempts: 0,
    retryable: false,
  });
}

/** A read changes nothing: on abort, the attempt in flight is abandoned too. */
function readSignal(opts: CallOptions): { signal?: AbortSignal; abandon?: boolean } {
  return opts.signal ? { signal: opts.signal, abandon: true } : {};
}
