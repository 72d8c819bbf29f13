// Constructors for every IAM type of the registry: `new RestorePlanIamBinding(name, args, opts?)`
// declares a resource of the stack the program builds. Arguments are typed from schemas/ (plain
// values or outputs); the instance's outputs (`id`, `etag`, …) are `${name.field}` references.
import * as registry from "../drivers/registry.js";
import type * as S from "../generated/schemas.js";
import { currentProgram } from "./context.js";
import { hasPending, type Input, type Inputs, knownDeep, knownOutput, type Output } from "./output.js";
import { output, referenceOutput, settled } from "./output.js";
import { resourceOptions, type ResourceOptions } from "./options.js";
import { lookup } from "./lookups.js";

export { type ResourceOptions, Provider } from "./options.js";

/** A declared resource: its name in the stack and its type token. */
export class Resource {
  constructor(
    readonly resourceName: string,
    readonly resourceType: string,
    /** The options it was declared with (a child inherits its provider and protect). */
    readonly options?: ResourceOptions,
  ) {}
}

export type ResourceOutputs<O> = { readonly [K in keyof O]-?: Output<O[K]> };

type Constructor<I, O> = new (
  name: string,
  args: Inputs<I>,
  opts?: ResourceOptions<I>,
) => Resource & ResourceOutputs<O>;

export type ResourceClass<I, O> = Constructor<I, O> & {
  /** Pulumi's read-only lookup of an existing grant or policy (`id` as `converge import` takes it):
   *  its outputs read from the live policy while the program runs; the stack manages nothing. */
  get(name: string, id: Input<string>, state?: unknown, opts?: ResourceOptions): ResourceOutputs<O>;
};

/** An output of the resource: its input echoed when known while the program runs (`binding.role`),
 *  else `${name.field}` known once planned or applied. */
function outputOf(name: string, key: string, args: Record<string, unknown>): Output<unknown> {
  if (!INPUT_OUTPUTS.has(key)) return referenceOutput(name, [key]);
  const arg = args[key];
  if (hasPending(arg)) return output(settled(arg).then((v) => outputOf(name, key, { [key]: v })));
  const known = knownDeep(arg);
  return known && known.value !== undefined ? knownOutput(known.value, name, [key]) : referenceOutput(name, [key]);
}

const INPUT_OUTPUTS = new Set(["name", "role", "members", "member", "condition", "bindings", "auditConfigs"]);

/** The constructor of the resource type `token`. */
function resourceType<I, O>(token: string): ResourceClass<I, O> {
  const typeName = token.slice(token.lastIndexOf(":") + 1);
  const cls = class extends Resource {
    constructor(name: string, args: Inputs<I>, opts?: ResourceOptions<I>) {
      super(name, token, opts as ResourceOptions | undefined);
      const program = currentProgram(`new ${typeName}("${name}")`);
      const site = program.siteOfCaller();
      const given = (args ?? {}) as Record<string, unknown>;
      const r = resourceOptions(program, name, token, given, opts as ResourceOptions | undefined, site);
      program.addResource(name, token, r.args, r.options, site);
      // Any other property is an output of the resource.
      const get = (t: this, key: string | symbol, rcv: unknown) =>
        typeof key === "symbol" || key in t ? Reflect.get(t, key, rcv) : outputOf(name, key, r.args);
      return new Proxy(this, { get });
    }

    static get(name: string, id: Input<string>, state?: unknown, opts?: ResourceOptions): ResourceOutputs<O> {
      return lookup(token, name, id, { state, opts }) as unknown as ResourceOutputs<O>;
    }
  };
  Object.defineProperty(cls, "name", { value: typeName });
  return cls as unknown as ResourceClass<I, O>;
}

/** Every IAM type of the registry (src/drivers/registry.ts), with its input and output types. */
const TYPES = {
  RestorePlanIamPolicy: resourceType<S.RestorePlanIamPolicyInputs, S.RestorePlanIamPolicyOutputs>(
    registry.RESTORE_PLAN_IAM_POLICY,
  ),
  RestorePlanIamBinding: resourceType<S.RestorePlanIamBindingInputs, S.RestorePlanIamBindingOutputs>(
    registry.RESTORE_PLAN_IAM_BINDING,
  ),
  RestorePlanIamMember: resourceType<S.RestorePlanIamMemberInputs, S.RestorePlanIamMemberOutputs>(
    registry.RESTORE_PLAN_IAM_MEMBER,
  ),
  EndpointIamPolicy: resourceType<S.EndpointIamPolicyInputs, S.EndpointIamPolicyOutputs>(registry.ENDPOINT_IAM_POLICY),
  EndpointIamBinding: resourceType<S.EndpointIamBindingInputs, S.EndpointIamBindingOutputs>(
    registry.ENDPOINT_IAM_BINDING,
  ),
  EndpointIamMember: resourceType<S.EndpointIamMemberInputs, S.EndpointIamMemberOutputs>(registry.ENDPOINT_IAM_MEMBER),
};

export const {
  RestorePlanIamPolicy,
  RestorePlanIamBinding,
  RestorePlanIamMember,
  EndpointIamPolicy,
  EndpointIamBinding,
  EndpointIamMember,
} = TYPES;
/** The instance type of each constructor (`let b: RestorePlanIamBinding`). */
type Of<K extends keyof typeof TYPES> = InstanceType<(typeof TYPES)[K]>;
export type RestorePlanIamPolicy = Of<"RestorePlanIamPolicy">;
export type RestorePlanIamBinding = Of<"RestorePlanIamBinding">;
export type RestorePlanIamMember = Of<"RestorePlanIamMember">;
export type EndpointIamPolicy = Of<"EndpointIamPolicy">;
export type EndpointIamBinding = Of<"EndpointIamBinding">;
export type EndpointIamMember = Of<"EndpointIamMember">;
