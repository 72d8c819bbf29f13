// `converge-iam/automation`: the Automation API alone, where Pulumi's users import theirs from
// `@pulumi/pulumi/automation`.
export { LocalWorkspace, WorkspaceStack } from "./automation/workspace.js";
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
} from "./automation/workspace.js";
export type { OpType } from "./automation/workspace-text.js";
export {
  Stack,
  type StackOptions,
  type PlanOptions,
  type ApplyOptions,
  type ApprovalOptions,
} from "./automation/automation.js";
export type { ApplyResult } from "./apply/executor.js";
export type { EngineEvent, Emit } from "./contracts/events.js";
