import { closest } from "fastest-levenshtein";
import { getFederation } from "./get-federation.js";
import { iamDriver } from "./iam-driver.js";
import type { PolicyKind } from "../gcp/object-kinds.js";
import type { DataSourceDriver, IamDriver } from "./types.js";

export const RESTORE_PLAN_IAM_BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
export const ENDPOINT_IAM_MEMBER = "cloudnative:aiplatform/v1beta1:EndpointIamMember";
export const GET_FEDERATION = getFederation.token;

const resources = new Map<string, IamDriver>([
  [
    RESTORE_PLAN_IAM_BINDING,
    iamDriver({ token: RESTORE_PLAN_IAM_BINDING, kind: "restorePlan", ownership: "binding", schemaFile: "types/restore-plan-iam-binding.schema.json", typeName: "RestorePlanIamBinding" }),
  ],
  [
    ENDPOINT_IAM_MEMBER,
    iamDriver({ token: ENDPOINT_IAM_MEMBER, kind: "endpoint", ownership: "member", schemaFile: "types/endpoint-iam-member.schema.json", typeName: "EndpointIamMember" }),
  ],
]);

const functions = new Map<string, DataSourceDriver>([[GET_FEDERATION, getFederation]]);

export function resourceDriver(token: string): IamDriver | undefined {
  return resources.get(token);
}

export function functionDriver(token: string): DataSourceDriver | undefined {
  return functions.get(token);
}

/** The type that adopts the bindings of a policy of this kind (import --generate): the first
 *  registered for the kind. */
export function adoptingDriver(kind: PolicyKind): IamDriver {
  const driver = [...resources.values()].find((d) => d.kind === kind);
  if (!driver) throw new Error(`no resource type edits policies of ${kind}`);
  return driver;
}

export const RESOURCE_TOKENS = [...resources.keys()];
export const FUNCTION_TOKENS = [...functions.keys()];

/** "did you mean …" for an unknown token: the closest known token of that kind. */
export function suggestToken(token: string, kind: "resource" | "function"): string {
  const pool = kind === "resource" ? RESOURCE_TOKENS : FUNCTION_TOKENS;
  return closest(token, pool);
}
