import { closest } from "fastest-levenshtein";
import { getFederation } from "./get-federation.js";
import { getEndpointIamPolicy, getRestorePlanIamPolicy } from "./get-iam-policy.js";
import { iamDriver } from "./iam-driver.js";
import { policyDriver } from "./policy-driver.js";
import type { PolicyKind } from "../gcp/object-kinds.js";
import type { DataSourceDriver, IamDriver, Ownership } from "./types.js";

export const RESTORE_PLAN_IAM_POLICY = "cloudnative:backup/v1:RestorePlanIamPolicy";
export const RESTORE_PLAN_IAM_BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
export const RESTORE_PLAN_IAM_MEMBER = "cloudnative:backup/v1:RestorePlanIamMember";
export const ENDPOINT_IAM_POLICY = "cloudnative:aiplatform/v1beta1:EndpointIamPolicy";
export const ENDPOINT_IAM_BINDING = "cloudnative:aiplatform/v1beta1:EndpointIamBinding";
export const ENDPOINT_IAM_MEMBER = "cloudnative:aiplatform/v1beta1:EndpointIamMember";
export const GET_FEDERATION = getFederation.token;

/** The IAM types: for each object kind, the whole policy, one binding, one member (Terraform's
 *  and Pulumi's trio). */
const resources = new Map<string, IamDriver>(
  [
    policyDriver({
      token: RESTORE_PLAN_IAM_POLICY,
      kind: "restorePlan",
      schemaFile: "types/restore-plan-iam-policy.schema.json",
      typeName: "RestorePlanIamPolicy",
      auditConfigs: true,
    }),
    iamDriver({
      token: RESTORE_PLAN_IAM_BINDING,
      kind: "restorePlan",
      ownership: "binding",
      schemaFile: "types/restore-plan-iam-binding.schema.json",
      typeName: "RestorePlanIamBinding",
    }),
    iamDriver({
      token: RESTORE_PLAN_IAM_MEMBER,
      kind: "restorePlan",
      ownership: "member",
      schemaFile: "types/restore-plan-iam-member.schema.json",
      typeName: "RestorePlanIamMember",
    }),
    // aiplatform v1beta1's Policy has no auditConfigs.
    policyDriver({
      token: ENDPOINT_IAM_POLICY,
      kind: "endpoint",
      schemaFile: "types/endpoint-iam-policy.schema.json",
      typeName: "EndpointIamPolicy",
      auditConfigs: false,
    }),
    iamDriver({
      token: ENDPOINT_IAM_BINDING,
      kind: "endpoint",
      ownership: "binding",
      schemaFile: "types/endpoint-iam-binding.schema.json",
      typeName: "EndpointIamBinding",
    }),
    iamDriver({
      token: ENDPOINT_IAM_MEMBER,
      kind: "endpoint",
      ownership: "member",
      schemaFile: "types/endpoint-iam-member.schema.json",
      typeName: "EndpointIamMember",
    }),
  ].map((d) => [d.token, d]),
);

const functions = new Map<string, DataSourceDriver>(
  [getFederation, getRestorePlanIamPolicy, getEndpointIamPolicy].map((f) => [f.token, f]),
);

/** The schemas the drivers validate with (resource inputs, function arguments and results):
 *  compiled at build time with the stack's (scripts/build-validators.mjs). */
export function driverSchemaRefs(): string[] {
  return [
    ...[...resources.values()].map((d) => d.inputsSchema),
    ...[...functions.values()].flatMap((f) => [f.argsSchema, f.resultSchema]),
  ];
}

export function resourceDriver(token: string): IamDriver | undefined {
  return resources.get(token);
}

export function functionDriver(token: string): DataSourceDriver | undefined {
  return functions.get(token);
}

/** The type of `kind` that owns a whole policy, a binding or a member (import --generate --as). */
export function adoptingDriver(kind: PolicyKind, as: Ownership = "binding"): IamDriver {
  const driver = [...resources.values()].find((d) => d.kind === kind && d.ownership === as);
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
