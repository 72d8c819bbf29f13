// `converge-iam/automation`: the Automation API alone, where Pulumi's users import theirs from
// `@pulumi/pulumi/automation`.
export { LocalWorkspace, WorkspaceStack } from "./sdk/workspace.js";
export type {
  ConfigValue,
  OutputValue,
  OutputMap,
  OperationOptions,
  PreviewResult,
  UpResult,
  DestroyResult,
  RefreshResult,
  InlineProgramArgs,
  LocalProgramArgs,
  LocalWorkspaceOptions,
} from "./sdk/workspace.js";
export type { OpType } from "./sdk/workspace-text.js";
export { Stack, type StackOptions, type PlanOptions, type ApplyOptions } from "./sdk/automation.js";
export type { ApplyResult } from "./apply/executor.js";
export type { EngineEvent, Emit } from "./contracts/events.js";
