// The five Google methods: getIamPolicy / setIamPolicy on restore plans and endpoints, and
// federations.get. Handlers throw ApiError for refusals; the server renders them.
import type { IncomingHttpHeaders } from "node:http";
import type { Policy } from "../generated/schemas.js";
import { authorize } from "./auth.js";
import { ok, type EmulatorContext, type Reply } from "./context.js";
import { ApiError, invalidArgument, notFound } from "./errors.js";
import {
  checkPolicyRules,
  checkRequestPolicy,
  newEtag,
  normalizePolicy,
  parseUpdateMask,
  renderPolicy,
  VALID_VERSIONS,
} from "./policy.js";
import type { ApiRoute } from "./routes.js";
import type { FederationObject, PolicyObject } from "./store.js";

export interface ApiRequest {
  route: ApiRoute;
  query: URLSearchParams | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
}

/** Parses a JSON request body; an empty body is `{}`. */
export function parseJsonBody(body: Buffer | undefined): Record<string, unknown> {
  if (!body || body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (e) {
    throw invalidArgument(`Invalid JSON payload received. ${(e as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalidArgument("Invalid JSON payload received. The request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

function rejectUnknownFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) throw invalidArgument(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`, k);
  }
}

/** `$alt=json;enum-encoding=int` (sent by Google's REST client libraries) asks for numeric enums. */
export function wantsIntEnums(query: URLSearchParams | undefined): boolean {
  if (!query) return false;
  const alt = query.get("$alt") ?? query.get("alt");
  return alt !== null && alt.includes("enum-encoding=int");
}

function requestedVersion(query: URLSearchParams | undefined, body: Record<string, unknown>): number {
  let raw: unknown = query?.get("options.requestedPolicyVersion") ?? query?.get("options.requested_policy_version") ?? undefined;
  if (raw === undefined) {
    const options = body.options as Record<string, unknown> | undefined;
    if (options !== undefined && (options === null || typeof options !== "object")) throw invalidArgument("Invalid value at 'options': expected an object.", "options");
    raw = options?.requestedPolicyVersion ?? options?.requested_policy_version;
  }
  if (raw === undefined || raw === null || raw === "") return 0;
  const n = typeof raw === "number" ? raw : /^-?\d+$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isInteger(n)) {
    throw invalidArgument(`Invalid value at 'options.requested_policy_version' (TYPE_INT32), ${JSON.stringify(raw)}`, "options.requestedPolicyVersion");
  }
  if (!VALID_VERSIONS.includes(n)) {
    throw invalidArgument(`Invalid requested policy version ${n}; the version must be 0, 1 or 3.`, "options.requestedPolicyVersion");
  }
  return n;
}

function notFoundFor(route: ApiRoute): ApiError {
  return notFound(`Resource '${route.name}' was not found.`, route.name);
}

export function handleApi(ctx: EmulatorContext, req: ApiRequest): Reply | Promise<Reply> {
  const { route } = req;
  const { store } = ctx;
  const projectId = store.projectId(route.project);
  authorize(store.project(projectId), headerValue(req.headers.authorization), route.permission, route.name, route.verb === "get" ? "any" : route.verb === "getIamPolicy" ? "read" : "write");
  switch (route.verb) {
    case "get": {
      const obj = store.find(route.kind, route.project, route.location, route.id) as FederationObject | undefined;
      if (!obj) throw notFoundFor(route);
      return ok(store.federationJson(obj, wantsIntEnums(req.query)));
    }
    case "getIamPolicy": {
      const body = parseJsonBody(req.body);
      rejectUnknownFields(body, ["options"]);
      const version = requestedVersion(req.query, body);
      const obj = store.find(route.kind, route.project, route.location, route.id) as PolicyObject | undefined;
      if (!obj) throw notFoundFor(route);
      if (obj.policy.conditional && version < 3) {
        throw invalidArgument(
          `The policy of '${route.name}' contains conditional role bindings; requested policy version ${version} cannot represent them. Request policy version 3 (options.requestedPolicyVersion=3).`,
          "options.requestedPolicyVersion",
        );
      }
      return ok(renderPolicy(obj.policy, wantsIntEnums(req.query)));
    }
    case "setIamPolicy":
      return setIamPolicy(ctx, req);
  }
}

function setIamPolicy(ctx: EmulatorContext, req: ApiRequest): Reply | Promise<Reply> {
  const { route } = req;
  const body = parseJsonBody(req.body);
  rejectUnknownFields(body, ["policy", "updateMask", "update_mask"]);
  const obj = ctx.store.find(route.kind, route.project, route.location, route.id) as PolicyObject | undefined;
  if (!obj) throw notFoundFor(route);
  const requested = checkRequestPolicy(body.policy);
  const mask = parseUpdateMask(body.updateMask ?? body.update_mask);
  const current = obj.policy;
  // No etag means an unconditional write (Google allows it); a stale one loses the race.
  if (requested.etag !== undefined && requested.etag !== current.etag) {
    throw new ApiError("ABORTED", "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.", {
      reason: "CONCURRENT_POLICY_CHANGES",
      metadata: { resource: route.name },
    });
  }
  // Google: an operation on a policy that holds conditions must say version 3; only a write without
  // an etag may overwrite it with an older version (and so lose its conditions).
  if (requested.etag !== undefined && current.conditional && requested.version !== 3) {
    throw invalidArgument(
      `The policy of '${route.name}' contains conditional role bindings; a setIamPolicy with its etag must use policy version 3, not ${requested.version ?? 0}.`,
      "policy.version",
    );
  }
  // Only the masked fields are replaced; the version is always taken from the request.
  const combined: Policy = {
    version: requested.version ?? 0,
    bindings: mask.bindings ? (requested.bindings ?? []) : current.bindings,
    ...(mask.auditConfigs ? (requested.auditConfigs ? { auditConfigs: requested.auditConfigs } : {}) : current.auditConfigs ? { auditConfigs: current.auditConfigs } : {}),
  };
  if (!mask.bindings) checkPolicyRules(combined);
  const next = normalizePolicy(combined, newEtag());
  ctx.store.setPolicy(obj, next);
  const reply = ok(next.json);
  // Acknowledge only once the change is durable (group commit with concurrent writers).
  const durable = ctx.commit();
  if (!durable) return reply;
  return durable.then(
    () => reply,
    (e: unknown) => {
      throw new ApiError("INTERNAL", `The policy change could not be persisted: ${(e as Error).message}`, { reason: "PERSISTENCE_FAILED" });
    },
  );
}

/** The first value of a request header. */
export function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}
