// Functions (data sources), in the SDK's two forms beside the declarative `invoke`:
// - direct: `await getFederation(args)` reads at once through the stack's cloud while the program
//   runs; the result is a plain value;
// - output: `getFederationOutput(args)` declares an invoke of the stack (a variable with
//   fn::invoke, exactly what a YAML stack writes): read at plan time when its arguments are known,
//   a deferred read (`<= read`) resolved during apply when they wait on a resource.
import { getFederation as federationDriver } from "../drivers/get-federation.js";
import {
  getEndpointIamPolicy as endpointPolicyDriver,
  getRestorePlanIamPolicy as restorePlanPolicyDriver,
} from "../drivers/get-iam-policy.js";
import type * as S from "../generated/schemas.js";
import { currentProgram } from "./context.js";
import { type Inputs, knownDeep, loadableOutput, type Output, referenceOutput } from "./output.js";
import { settled, UnknownApplyError } from "./output.js";

export interface InvokeOptions {
  /** The invoke's name in the stack (a variable's name in YAML); default: the function's name. */
  name?: string;
}

/** The declarative form: an invoke of `token` with `args`, as `fn::invoke` in YAML. */
export function invoke<R = Record<string, unknown>>(
  token: string,
  args: Record<string, unknown>,
  opts: InvokeOptions = {},
): Output<R> {
  const fnName = token.slice(token.lastIndexOf(":") + 1);
  const program = currentProgram(fnName);
  const name = opts.name ?? program.freshName(fnName);
  const site = program.siteOfCaller();
  program.addInvoke(name, token, args, site);
  if (!program.readsNow) return referenceOutput<R>(name);
  // Read while the program runs once a function (`.apply`) needs its result and its arguments are
  // known; the stack still declares the invoke (read again at plan time, as a YAML stack's is).
  return loadableOutput<R>(name, async () => {
    const known = knownDeep(await settled(args));
    const why = `${fnName}'s arguments are known only during apply: its result cannot be read now`;
    if (!known) throw new UnknownApplyError(why);
    return program.read(token, known.value as Record<string, unknown>, site);
  });
}

/** The direct form of `token`: the result, read now. */
async function readNow<R>(token: string, args: object): Promise<R> {
  const fnName = token.slice(token.lastIndexOf(":") + 1);
  const program = currentProgram(fnName);
  return (await program.read(token, args as Record<string, unknown>, program.siteOfCaller())) as R;
}

export const getFederation = (args: S.GetFederationArgs): Promise<S.GetFederationResult> =>
  readNow(federationDriver.token, args);
export const getFederationOutput = (
  args: Inputs<S.GetFederationArgs>,
  opts?: InvokeOptions,
): Output<S.GetFederationResult> => invoke(federationDriver.token, args, opts);

export const getRestorePlanIamPolicy = (
  args: S.GetRestorePlanIamPolicyArgs,
): Promise<S.GetRestorePlanIamPolicyResult> => readNow(restorePlanPolicyDriver.token, args);
export const getRestorePlanIamPolicyOutput = (
  args: Inputs<S.GetRestorePlanIamPolicyArgs>,
  opts?: InvokeOptions,
): Output<S.GetRestorePlanIamPolicyResult> => invoke(restorePlanPolicyDriver.token, args, opts);

export const getEndpointIamPolicy = (args: S.GetEndpointIamPolicyArgs): Promise<S.GetEndpointIamPolicyResult> =>
  readNow(endpointPolicyDriver.token, args);
export const getEndpointIamPolicyOutput = (
  args: Inputs<S.GetEndpointIamPolicyArgs>,
  opts?: InvokeOptions,
): Output<S.GetEndpointIamPolicyResult> => invoke(endpointPolicyDriver.token, args, opts);
