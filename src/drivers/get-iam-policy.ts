// getRestorePlanIamPolicy and getEndpointIamPolicy: the IAM policy of one object, as
// google-native's functions return it (bindings, auditConfigs, etag, version). An object with no
// policy set has an empty one; a missing object is NOT_FOUND.
import { kindLabel, type PolicyKind } from "../gcp/object-kinds.js";
import { normalizeMembers } from "../iam/members.js";
import { canonicalCondition } from "../iam/conditions.js";
import type { GetRestorePlanIamPolicyResult, Policy } from "../generated/schemas.js";
import { objectNameFromArgs } from "./object-args.js";
import type { DataSourceDriver } from "./types.js";

interface Spec {
  token: string;
  kind: PolicyKind;
  idKey: string;
  schemaFile: string;
  typeName: string;
}

/** The result of both functions (their schemas are the same shape). */
export type IamPolicyResult = GetRestorePlanIamPolicyResult;

/** A missing object, as a cloud error would say it (the callers read its status). */
class NotFound extends Error {
  readonly status = "NOT_FOUND";
}

function policyResult(p: Policy): IamPolicyResult {
  const bindings = (p.bindings ?? [])
    .filter((b) => b.members.length > 0)
    .map((b) => ({
      role: b.role,
      members: normalizeMembers(b.members),
      ...(b.condition ? { condition: canonicalCondition(b.condition)! } : {}),
    }));
  return { bindings, auditConfigs: p.auditConfigs ?? [], etag: p.etag ?? "", version: p.version ?? 1 };
}

function getIamPolicyDriver(spec: Spec): DataSourceDriver {
  return {
    token: spec.token,
    kind: spec.kind,
    argsSchema: `${spec.schemaFile}#/definitions/${spec.typeName}Args`,
    resultSchema: `${spec.schemaFile}#/definitions/${spec.typeName}Result`,
    resultNames: ["bindings", "auditConfigs", "etag", "version"],
    objectName: (args, defaults) => objectNameFromArgs(spec.kind, spec.idKey, args, defaults),
    async read(cloud, name, signal) {
      const policy = await cloud.getIamPolicy(spec.kind, name, signal);
      if (!policy) throw new NotFound(`${kindLabel(spec.kind)} ${name} does not exist`);
      return policyResult(policy) as unknown as Record<string, unknown>;
    },
  };
}

export const getRestorePlanIamPolicy = getIamPolicyDriver({
  token: "cloudnative:backup/v1:getRestorePlanIamPolicy",
  kind: "restorePlan",
  idKey: "restorePlanId",
  schemaFile: "types/get-restore-plan-iam-policy.schema.json",
  typeName: "GetRestorePlanIamPolicy",
});
export const getEndpointIamPolicy = getIamPolicyDriver({
  token: "cloudnative:aiplatform/v1beta1:getEndpointIamPolicy",
  kind: "endpoint",
  idKey: "endpointId",
  schemaFile: "types/get-endpoint-iam-policy.schema.json",
  typeName: "GetEndpointIamPolicy",
});
