// The object methods: getIamPolicy / setIamPolicy / testIamPermissions on restore plans,
// endpoints and federations, and federations.get, each with its API version's request and response
// messages (the vendored discovery documents, test/conformance/discovery/). Handlers throw ApiError
// for refusals; the server renders them.
import type { IncomingHttpHeaders } from "node:http";
import type { Policy } from "../generated/schemas.js";
import { OBJECT_KINDS } from "../gcp/object-kinds.js";
import { authorize } from "./auth.js";
import { DIALECTS, type IamDialect } from "./dialects.js";
import { ok, type EmulatorContext, type Reply } from "./context.js";
import { ApiError, invalidArgument, notFound } from "./errors.js";
import { checkPermissions, heldPermissions } from "./permissions.js";
import {
  checkPolicyRules,
  checkRequestPolicy,
  newEtag,
  normalizePolicy,
  parseUpdateMask,
  renderPolicy,
  sameEtag,
  VALID_VERSIONS,
} from "./policy.js";
import {
  checkQuery,
  GET_IAM_POLICY_REQUEST,
  type Message,
  parseBody,
  parseMessage,
  setIamPolicyRequest,
  TEST_IAM_PERMISSIONS_REQUEST,
} from "./proto-json.js";
import type { ApiRoute, EmulatorVerb } from "./routes.js";
import type { FederationObject } from "./store.js";

export { parseJsonBody } from "./proto-json.js";

export interface ApiRequest {
  route: ApiRoute;
  query: URLSearchParams | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
}

/** `$alt=json;enum-encoding=int` (sent by Google's REST client libraries) asks for numeric enums. */
export function wantsIntEnums(query: URLSearchParams | undefined): boolean {
  if (!query) return false;
  const alt = query.get("$alt") ?? query.get("alt");
  return alt !== null && alt.includes("enum-encoding=int");
}

const SET_REQUESTS = { true: setIamPolicyRequest(true, true), false: setIamPolicyRequest(false, false) };

function requestedVersion(query: URLSearchParams | undefined, body: Record<string, unknown>): number {
  const q = query?.get("options.requestedPolicyVersion") ?? query?.get("options.requested_policy_version") ?? null;
  const fromQuery =
    q === null || q === "" ? undefined : parseMessage({ requestedPolicyVersion: q }, REQUESTED_VERSION, "options");
  const raw = (fromQuery ?? (body.options as Record<string, unknown> | undefined))?.requestedPolicyVersion;
  if (raw === undefined) return 0;
  const n = raw as number;
  if (!VALID_VERSIONS.includes(n)) {
    throw invalidArgument(
      `Invalid requested policy version ${n}; the version must be 0, 1 or 3.`,
      "options.requestedPolicyVersion",
    );
  }
  return n;
}

const REQUESTED_VERSION: Message = { requestedPolicyVersion: { type: { t: "int32" } } };

function notFoundFor(route: ApiRoute): ApiError {
  return notFound(`Resource '${route.name}' was not found.`, route.name);
}

function access(verb: EmulatorVerb): "any" | "read" | "write" {
  if (verb === "getIamPolicy") return "read";
  return verb === "setIamPolicy" ? "write" : "any";
}

export function handleApi(ctx: EmulatorContext, req: ApiRequest): Reply | Promise<Reply> {
  const { route } = req;
  const { store } = ctx;
  const project = store.project(store.projectId(route.project));
  const authorization = headerValue(req.headers.authorization);
  authorize(project, authorization, route.permission || route.method, route.name, access(route.verb));
  const dialect = DIALECTS[route.kind];
  checkQuery(req.query, queryParameters(route.verb, dialect));
  switch (route.verb) {
    case "get": {
      const obj = store.find(route.kind, route.project, route.location, route.id) as FederationObject | undefined;
      if (!obj) throw notFoundFor(route);
      return ok(store.federationJson(obj, wantsIntEnums(req.query)));
    }
    case "getIamPolicy": {
      const body = parseBody(req.body, GET_IAM_POLICY_REQUEST);
      const version = requestedVersion(req.query, body);
      const obj = store.find(route.kind, route.project, route.location, route.id);
      if (!obj) throw notFoundFor(route);
      return ok(renderPolicy(obj.policy, wantsIntEnums(req.query), version));
    }
    case "setIamPolicy":
      return setIamPolicy(ctx, req, dialect);
    case "testIamPermissions": {
      const asked = dialect.permissionsInQuery ? permissionsFromQuery(req) : permissionsFromBody(req.body);
      if (!store.find(route.kind, route.project, route.location, route.id)) throw notFoundFor(route);
      const held = heldPermissions(project, authorization, OBJECT_KINDS[route.kind].service, asked);
      return ok(JSON.stringify(held.length > 0 ? { permissions: held } : {}));
    }
  }
}

/** The query parameters of a method beyond the system ones (its discovery document's). */
function queryParameters(verb: EmulatorVerb, dialect: IamDialect): readonly string[] {
  if (verb === "getIamPolicy") return ["options.requestedPolicyVersion", "options.requested_policy_version"];
  return verb === "testIamPermissions" && dialect.permissionsInQuery ? ["permissions"] : [];
}

function permissionsFromQuery(req: ApiRequest): string[] {
  // The method has no request body: any field in one is unknown.
  parseBody(req.body, {});
  return checkPermissions(req.query?.getAll("permissions") ?? [], "permissions");
}

function permissionsFromBody(body: Buffer | undefined): string[] {
  const parsed = parseBody(body, TEST_IAM_PERMISSIONS_REQUEST);
  return checkPermissions((parsed.permissions as string[] | undefined) ?? [], "permissions");
}

function setIamPolicy(ctx: EmulatorContext, req: ApiRequest, dialect: IamDialect): Reply | Promise<Reply> {
  const { route } = req;
  const body = parseBody(req.body, SET_REQUESTS[`${dialect.auditConfigs}`]);
  const obj = ctx.store.find(route.kind, route.project, route.location, route.id);
  if (!obj) throw notFoundFor(route);
  const requested = checkRequestPolicy(body.policy);
  const mask = parseUpdateMask(body.updateMask);
  const current = obj.policy;
  // No etag means an unconditional write (Google allows it); a stale one loses the race. Etags
  // are bytes: their base64 spellings (padded or not) are one etag.
  if (requested.etag !== undefined && !sameEtag(requested.etag, current.etag)) {
    throw new ApiError(
      "ABORTED",
      "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
      { reason: "CONCURRENT_POLICY_CHANGES", metadata: { resource: route.name } },
    );
  }
  // Google: an operation on a policy that holds conditions must say version 3; only a write without
  // an etag may overwrite it with an older version (and so lose its conditions).
  if (requested.etag !== undefined && current.conditional && requested.version !== 3) {
    throw invalidArgument(
      `The policy of '${route.name}' contains conditional role bindings; a setIamPolicy with its ` +
        `etag must use policy version 3, not ${requested.version ?? 0}.`,
      "policy.version",
    );
  }
  // Only the masked fields are replaced; the version is always taken from the request.
  const combined: Policy = {
    version: requested.version ?? 0,
    bindings: mask.bindings ? (requested.bindings ?? []) : current.bindings,
  };
  const auditConfigs = mask.auditConfigs ? requested.auditConfigs : current.auditConfigs;
  if (auditConfigs) combined.auditConfigs = auditConfigs;
  if (!mask.bindings) checkPolicyRules(combined);
  const next = normalizePolicy(combined, newEtag());
  ctx.store.setPolicy(obj, next);
  const reply = ok(renderPolicy(next, wantsIntEnums(req.query), 3));
  // Acknowledge only once the change is durable (group commit with concurrent writers).
  const durable = ctx.commit();
  if (!durable) return reply;
  return durable.then(
    () => reply,
    (e: unknown) => {
      throw new ApiError("INTERNAL", `The policy change could not be persisted: ${(e as Error).message}`, {
        reason: "PERSISTENCE_FAILED",
      });
    },
  );
}

/** The first value of a request header. */
export function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}
