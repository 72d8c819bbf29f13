// Server-side IAM policy rules: what setIamPolicy accepts, how a stored policy is normalised and
// how it is rendered on the wire. The emulator's own principal, role and binding rules live in
// principals.ts, roles.ts and bindings.ts (independent of the client's src/iam/).
import { createHash, randomBytes } from "node:crypto";
import type { AuditConfig, Binding, Condition, Policy } from "../generated/schemas.js";
import { validate } from "../schemas/index.js";
import { mergeBindings, MAX_PRINCIPALS, policySize, sizeProblem } from "./bindings.js";
import { conditionExpressionProblem } from "./conditions.js";
import { isPublicPrincipal, principalProblem } from "./principals.js";
import { isBasicRole, roleNameProblem } from "./roles.js";
import { schemaProblem } from "./schema-errors.js";
import { ApiError, invalidArgument } from "./errors.js";
import { base64Bytes, LOG_TYPES } from "./proto-json.js";

export const VALID_VERSIONS: readonly number[] = [0, 1, 3];

/** A policy as the emulator stores it: normalised, version >= 1, always with an etag. */
export interface StoredPolicy {
  version: 1 | 3;
  bindings: Binding[];
  auditConfigs?: AuditConfig[];
  etag: string;
  /** True when a binding has a condition (then only version-3 reads may see it). */
  conditional: boolean;
  /** The wire JSON, built once per write: reads are then a map lookup and a socket write. */
  json: string;
}

/** A fresh etag: standard base64 of 8 random bytes, like Google's. */
export function newEtag(): string {
  return randomBytes(8).toString("base64");
}

/** A binding without `members` (proto3 JSON omits empty repeated fields) has none (in place). */
function defaultMembers(policy: Record<string, unknown>): void {
  if (!Array.isArray(policy.bindings)) return;
  for (const b of policy.bindings) {
    const rec = b as { members?: unknown } | null;
    if (rec && typeof rec === "object" && !Array.isArray(rec) && rec.members === undefined) rec.members = [];
  }
}

/** Etags are bytes: two spellings of the same bytes (padded or not, either alphabet) are equal. */
export function sameEtag(a: string, b: string): boolean {
  const x = base64Bytes(a);
  const y = base64Bytes(b);
  return x !== undefined && y !== undefined && x.equals(y);
}

/**
 * Checks the shape of a request's `policy` (JSON Schema) and every semantic rule Google applies to
 * setIamPolicy. `field` is the request path used in messages ("policy"). Throws ApiError.
 */
export function checkRequestPolicy(raw: unknown, field = "policy"): Policy {
  if (raw === undefined || raw === null) throw invalidArgument(`Invalid argument: '${field}' is required.`, field);
  if (typeof raw !== "object" || Array.isArray(raw))
    throw invalidArgument(`Invalid value at '${field}': expected an object.`, field);
  const rec = raw as Record<string, unknown>;
  defaultMembers(rec);
  if (rec.version !== undefined && !(typeof rec.version === "number" && VALID_VERSIONS.includes(rec.version))) {
    throw invalidArgument(
      `Invalid policy version ${JSON.stringify(rec.version)}: the version must be 0, 1 or 3.`,
      `${field}.version`,
    );
  }
  const errors = validate("iam-policy.schema.json", raw);
  if (errors.length > 0) {
    const e = errors[0]!;
    const at = `${field}${e.instancePath.replace(/\/(\d+)/g, "[$1]").replace(/\//g, ".")}`;
    throw invalidArgument(`Invalid JSON payload received: ${schemaProblem(errors, field)}.`, at);
  }
  const policy = raw as Policy;
  checkPolicyRules(policy, field);
  return policy;
}

/** The semantic rules (members, roles, version vs conditions, public/basic roles, size). */
export function checkPolicyRules(policy: Policy, field = "policy"): void {
  const version = policy.version ?? 0;
  (policy.bindings ?? []).forEach((b, i) => {
    const at = `${field}.bindings[${i}]`;
    const rp = roleNameProblem(b.role);
    if (rp) throw invalidArgument(`Invalid role in ${at}: ${rp}.`, `${at}.role`, { role: String(b.role) });
    b.members.forEach((m, j) => {
      const mp = principalProblem(m);
      if (mp)
        throw invalidArgument(`Invalid member in ${at}.members[${j}]: ${mp}.`, `${at}.members[${j}]`, {
          member: String(m),
        });
    });
    if (b.condition) {
      if (version !== 3) {
        throw invalidArgument(
          `Policy version ${version} cannot hold the conditional binding of role "${b.role}" (condition "` +
            `${b.condition.title}"); conditional role bindings require policy version 3.`,
          `${field}.version`,
        );
      }
      if (isBasicRole(b.role)) {
        throw invalidArgument(
          `Conditions are not supported on basic role "${b.role}" (${at}); use a predefined or custom role.`,
          `${at}.condition`,
          { role: b.role },
        );
      }
      const pub = b.members.find(isPublicPrincipal);
      if (pub) {
        throw invalidArgument(`Conditions cannot be used with public principal "${pub}" (${at}).`, `${at}.members`, {
          member: pub,
        });
      }
      const problem = conditionExpressionProblem(b.condition.expression);
      if (problem) {
        throw invalidArgument(`Condition expression of ${at} is invalid: ${problem}`, `${at}.condition.expression`, {
          expression: b.condition.expression,
        });
      }
    }
  });
}

/**
 * Normalises an accepted policy the way Google stores it (see bindings.ts): duplicate (role,
 * condition) bindings merged, duplicate members dropped, empty bindings dropped, conditions reduced
 * to the stored fields, version 0 stored as 1. Refuses a policy over Google's size limits.
 */
export function normalizePolicy(policy: Policy, etag: string, field = "policy"): StoredPolicy {
  const bindings = mergeBindings(policy.bindings ?? []);
  const size = policySize(bindings);
  const tooBig = sizeProblem(size);
  if (tooBig) {
    const metadata = {
      principals: String(size.principals),
      groups: String(size.googleGroups),
      limit: String(MAX_PRINCIPALS),
    };
    const violation = { field: `${field}.bindings`, description: tooBig };
    throw new ApiError("INVALID_ARGUMENT", tooBig, {
      reason: "POLICY_SIZE_LIMIT_EXCEEDED",
      metadata,
      details: [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [violation] }],
    });
  }
  const auditConfigs = policy.auditConfigs && policy.auditConfigs.length > 0 ? policy.auditConfigs : undefined;
  return storedPolicy(policy.version === 3 ? 3 : 1, bindings, auditConfigs, etag);
}

function storedPolicy(
  version: 1 | 3,
  bindings: Binding[],
  auditConfigs: AuditConfig[] | undefined,
  etag: string,
): StoredPolicy {
  const conditional = bindings.some((b) => b.condition);
  // Google answers version 1 for a policy without conditional bindings, whatever was written.
  const wire: Policy = { version: conditional ? 3 : 1 };
  if (bindings.length > 0) wire.bindings = bindings;
  if (auditConfigs) wire.auditConfigs = auditConfigs;
  wire.etag = etag;
  const json = JSON.stringify(wire);
  return { version, bindings, ...(auditConfigs ? { auditConfigs } : {}), etag, conditional, json };
}

export function emptyPolicy(etag = newEtag()): StoredPolicy {
  return storedPolicy(1, [], undefined, etag);
}

/**
 * The policy as sent on the wire at the requested version; with int enums when the client asked
 * for them. Below version 3 a conditional binding loses its condition and its role is suffixed
 * `_withcond_{hash}`, as Google documents (https://cloud.google.com/iam/docs/policies#versions).
 */
export function renderPolicy(p: StoredPolicy, intEnums: boolean, requestedVersion = 3): string {
  const v1 = p.conditional && requestedVersion < 3;
  if (!v1 && (!intEnums || !p.auditConfigs)) return p.json;
  const wire = JSON.parse(p.json) as Policy;
  if (v1) {
    wire.version = 1;
    wire.bindings = (wire.bindings ?? []).map((b) =>
      b.condition ? { role: withcondRole(b.role, b.condition), members: b.members } : b,
    );
  }
  for (const c of intEnums ? (wire.auditConfigs ?? []) : []) {
    for (const l of c.auditLogConfigs ?? []) {
      if (l.logType) (l as { logType: unknown }).logType = LOG_TYPES.indexOf(l.logType);
    }
  }
  return JSON.stringify(wire);
}

/** roles/x_withcond_{20 hex digits}: the same name for the same condition, another for another. */
function withcondRole(role: string, c: Condition): string {
  const hash = createHash("sha256")
    .update(JSON.stringify([c.title, c.description ?? "", c.expression]))
    .digest("hex");
  return `${role}_withcond_${hash.slice(0, 20)}`;
}

/** Field-mask paths setIamPolicy understands; the default is Google's `bindings,etag`. */
export interface UpdateMask {
  bindings: boolean;
  auditConfigs: boolean;
}

/** The paths of a FieldMask (proto3 JSON: one comma-separated string, lowerCamel or proto names). */
export function parseUpdateMask(raw: unknown): UpdateMask {
  if (raw === undefined || raw === "") return { bindings: true, auditConfigs: false };
  const mask: UpdateMask = { bindings: false, auditConfigs: false };
  for (const p of String(raw)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    if (p === "bindings") mask.bindings = true;
    else if (p === "auditConfigs" || p === "audit_configs") mask.auditConfigs = true;
    else if (p === "etag" || p === "version") continue;
    else
      throw invalidArgument(
        `Invalid update mask path "${p}": setIamPolicy accepts bindings, etag and auditConfigs.`,
        "updateMask",
        { path: p },
      );
  }
  return mask;
}
