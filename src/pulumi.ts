// `converge-iam/pulumi`: the names of `@pulumi/pulumi` a program uses, for programs that keep their
// meaning when their import line changes: outputs (all, concat, interpolate, output, secret,
// unsecret, jsonStringify), Config, resource options and the stack's name.
import { currentProgram } from "./sdk/context.js";
import { isOutput, isSecretOutput, type Output } from "./sdk/output.js";

export {
  type Output,
  type Input,
  type Inputs,
  output,
  interpolate,
  secret,
  unsecret,
  jsonStringify,
  isOutput,
} from "./sdk/output.js";
export { Config } from "./sdk/config.js";
export { StackReference, type StackReferenceOutputDetails } from "./sdk/stack-reference.js";
export { all, concat } from "./sdk/combine.js";
export { Resource, Resource as CustomResource } from "./sdk/resources.js";
export {
  Provider as ProviderResource,
  type ResourceOptions,
  type ResourceOptions as CustomResourceOptions,
} from "./sdk/options.js";

/** Whether an output is secret (Pulumi's `isSecret`). */
export async function isSecret(value: unknown): Promise<boolean> {
  return isOutput(value) && isSecretOutput(value as Output<unknown>);
}

/** Pulumi's project is converge's stack (its name). */
export function getProject(): string {
  return currentProgram("getProject()").stack.name;
}

/** Pulumi's stack is converge's workspace: CONVERGE_WORKSPACE, else "default". */
export function getStack(): string {
  currentProgram("getStack()");
  return process.env.CONVERGE_WORKSPACE || "default";
}
