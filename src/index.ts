// The converge package as a library: the SDK (constructors for every IAM type, invokes in their
// direct and output forms, outputs) for program stacks, and the Automation API.
export { type Output, type Input, type Inputs, output, interpolate, isOutput } from "./sdk/output.js";
export * from "./sdk/resources.js";
export * from "./sdk/invokes.js";
export type { StackContext } from "./sdk/context.js";
export type { Program } from "./sdk/program.js";
export type {
  RestorePlanIamPolicyInputs,
  RestorePlanIamPolicyOutputs,
  RestorePlanIamBindingInputs,
  RestorePlanIamBindingOutputs,
  RestorePlanIamMemberInputs,
  RestorePlanIamMemberOutputs,
  EndpointIamPolicyInputs,
  EndpointIamPolicyOutputs,
  EndpointIamBindingInputs,
  EndpointIamBindingOutputs,
  EndpointIamMemberInputs,
  EndpointIamMemberOutputs,
  GetFederationArgs,
  GetFederationResult,
  GetRestorePlanIamPolicyArgs,
  GetRestorePlanIamPolicyResult,
  GetEndpointIamPolicyArgs,
  GetEndpointIamPolicyResult,
  Binding,
  Condition,
  AuditConfig,
  AuditLogConfig,
  ProviderConfig,
  BackendConfig,
  Plan,
  ResourceChange,
  State,
  PlanDiagnostic,
} from "./generated/schemas.js";
export { Stack, type StackOptions, type PlanOptions, type ApplyOptions } from "./automation/automation.js";
export { LocalWorkspace, WorkspaceStack } from "./automation/workspace.js";
export type { ApplyResult } from "./apply/executor.js";
export type { EngineEvent, Emit } from "./contracts/events.js";
export { UserError, type Diagnostic } from "./diagnostics/diagnostic.js";
export { CloudError, isCloudError } from "./cloud/errors.js";
export { backup, gkebackup, aiplatform, metastore, Provider } from "./google-native.js";
export { Config } from "./sdk/config.js";
export { GuardrailRule, BuiltinGuardrail, type GuardrailRuleArgs, type BuiltinSetting } from "./sdk/guardrails.js";
export { StackReference, type StackReferenceOutputDetails } from "./sdk/stack-reference.js";
export { secret, unsecret, jsonStringify } from "./sdk/output.js";
export { all, concat } from "./sdk/combine.js";
