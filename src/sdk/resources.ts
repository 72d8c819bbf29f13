// Constructors for every IAM type of the registry: `new RestorePlanIamBinding(name, args, opts?)`
// declares a resource of the stack the program builds. Arguments are typed from schemas/ (plain
// values or outputs); the instance's outputs (`id`, `etag`, …) are `${name.field}` references.
import * as registry from "../drivers/registry.js";
import type * as S from "../generated/schemas.js";
import { currentProgram } from "./context.js";
import { type Inputs, type Output, referenceOutput } from "./output.js";

export interface ResourceOptions<I = Record<string, unknown>> {
  /** Resources (or their names) this one waits for. */
  dependsOn?: readonly (Resource | string)[];
  /** A protected resource is never deleted or replaced. */
  protect?: boolean;
  /** Inputs whose changes in the live cloud are not planned back. */
  ignoreChanges?: readonly (keyof I & string)[];
  /** The ID of an existing grant to adopt instead of creating it. */
  import?: string;
}

/** A declared resource: its name in the stack and its type token. */
export class Resource {
  constructor(
    readonly resourceName: string,
    readonly resourceType: string,
  ) {}
}

export type ResourceOutputs<O> = { readonly [K in keyof O]-?: Output<O[K]> };

export type ResourceClass<I, O> = new (name: string, args: Inputs<I>, opts?: ResourceOptions<I>) => Resource & ResourceOutputs<O>;

function optionsOf(opts: ResourceOptions<never> | undefined): Record<string, unknown> {
  if (!opts) return {};
  return {
    ...(opts.dependsOn?.length ? { dependsOn: opts.dependsOn.map((d) => (d instanceof Resource ? d.resourceName : d)) } : {}),
    ...(opts.protect !== undefined ? { protect: opts.protect } : {}),
    ...(opts.ignoreChanges?.length ? { ignoreChanges: [...opts.ignoreChanges] } : {}),
    ...(opts.import !== undefined ? { import: opts.import } : {}),
  };
}

/** The constructor of the resource type `token`. */
function resourceType<I, O>(token: string): ResourceClass<I, O> {
  const typeName = token.slice(token.lastIndexOf(":") + 1);
  const cls = class extends Resource {
    constructor(name: string, args: Inputs<I>, opts?: ResourceOptions<I>) {
      super(name, token);
      const program = currentProgram(`new ${typeName}("${name}")`);
      program.addResource(name, token, args, optionsOf(opts as ResourceOptions<never>), program.siteOfCaller());
      // Any other property is an output of the resource: `${name.field}`.
      return new Proxy(this, { get: (t, key, r) => (typeof key === "symbol" || key in t ? Reflect.get(t, key, r) : referenceOutput(name, [key])) });
    }
  };
  Object.defineProperty(cls, "name", { value: typeName });
  return cls as unknown as ResourceClass<I, O>;
}

/** Every IAM type of the registry (src/drivers/registry.ts), with its input and output types. */
const TYPES = {
  RestorePlanIamPolicy: resourceType<S.RestorePlanIamPolicyInputs, S.RestorePlanIamPolicyOutputs>(registry.RESTORE_PLAN_IAM_POLICY),
  RestorePlanIamBinding: resourceType<S.RestorePlanIamBindingInputs, S.RestorePlanIamBindingOutputs>(registry.RESTORE_PLAN_IAM_BINDING),
  RestorePlanIamMember: resourceType<S.RestorePlanIamMemberInputs, S.RestorePlanIamMemberOutputs>(registry.RESTORE_PLAN_IAM_MEMBER),
  EndpointIamPolicy: resourceType<S.EndpointIamPolicyInputs, S.EndpointIamPolicyOutputs>(registry.ENDPOINT_IAM_POLICY),
  EndpointIamBinding: resourceType<S.EndpointIamBindingInputs, S.EndpointIamBindingOutputs>(registry.ENDPOINT_IAM_BINDING),
  EndpointIamMember: resourceType<S.EndpointIamMemberInputs, S.EndpointIamMemberOutputs>(registry.ENDPOINT_IAM_MEMBER),
};

export const { RestorePlanIamPolicy, RestorePlanIamBinding, RestorePlanIamMember, EndpointIamPolicy, EndpointIamBinding, EndpointIamMember } = TYPES;
/** The instance type of each constructor (`let b: RestorePlanIamBinding`). */
type Of<K extends keyof typeof TYPES> = InstanceType<(typeof TYPES)[K]>;
export type RestorePlanIamPolicy = Of<"RestorePlanIamPolicy">;
export type RestorePlanIamBinding = Of<"RestorePlanIamBinding">;
export type RestorePlanIamMember = Of<"RestorePlanIamMember">;
export type EndpointIamPolicy = Of<"EndpointIamPolicy">;
export type EndpointIamBinding = Of<"EndpointIamBinding">;
export type EndpointIamMember = Of<"EndpointIamMember">;
