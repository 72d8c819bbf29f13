// The driver contract. IAM drivers are pure descriptions of ownership; the policy engine in
// src/cloud/ does the I/O for both, so a new IAM type is a few lines of registration.
import type { AuditConfig, Binding, Condition, Policy } from "../generated/schemas.js";
import type { CloudPort } from "../contracts/cloud-port.js";
import type { PolicyModification } from "../iam/policy.js";
import type { NameDefaults } from "../cloud/names.js";
import type { ObjectKind, PolicyKind } from "../gcp/object-kinds.js";

/**
 * The inputs of an IAM resource, normalised. Every type names its object (`name`); a binding
 * has `role`, `condition`, `members`; a member `role`, `condition`, `member`; a whole policy
 * `bindings` and `auditConfigs`.
 */
export interface IamInputs {
  name: string;
  role?: string;
  condition?: Condition;
  members?: string[];
  member?: string;
  bindings?: Binding[];
  auditConfigs?: AuditConfig[];
}

/** The input fields of an IAM type, as its schema names them. */
export type InputField = "name" | "role" | "condition" | "members" | "member" | "bindings" | "auditConfigs";

/** What an IAM resource owns: a whole policy, one binding, or one member of a binding. */
export type Ownership = "policy" | "binding" | "member";

export interface Problem {
  /** Path below the resource's `properties` */
  path: (string | number)[];
  message: string;
}

/** What an import ID designates: a whole policy (`name` alone), a binding or a member. */
export interface ImportTarget {
  name: string;
  role?: string;
  member?: string;
  conditionTitle?: string;
}

/**
 * A grant a resource holds once applied: a whole policy (authoritative for every binding of one
 * object; no type claims it yet), a whole binding (authoritative for one role and condition on
 * one object) or one member of it. Revokes leave the grants other resources claim; two claims
 * of a stack may not conflict (src/claims/conflict-rule.ts).
 */
export type Claim = (
  | { scope: "policy"; kind: PolicyKind; object: string }
  | { scope: "binding"; kind: PolicyKind; object: string; role: string; condition?: Condition }
  | { scope: "member"; kind: PolicyKind; object: string; role: string; condition?: Condition; member: string }
) & {
  /** Its fields computed from a secret (recorded with it: `state claims` and errors hide them). */
  sensitive?: SensitiveClaimField[];
};

export type SensitiveClaimField = "object" | "role" | "condition" | "member";

export interface IamDriver {
  readonly token: string;
  /** The object kind whose policy it edits (src/gcp/object-kinds.ts). */
  readonly kind: PolicyKind;
  /** policy: authoritative for the object's whole policy; binding: for (object, role,
   *  condition); member: owns one member of it */
  readonly ownership: Ownership;
  /** Its input fields, in schema order. */
  readonly inputFields: readonly InputField[];
  readonly inputsSchema: string;
  readonly outputsSchema: string;
  readonly outputNames: readonly string[];
  /** Input properties whose change replaces the resource (the rest update in place). */
  readonly replaceOn: readonly string[];
  /** The expected import ID form, for messages. */
  readonly importIdForm: string;
  /** Completes short names and canonicalises; reports problems with member/role/name forms. */
  normalize(inputs: Record<string, unknown>, defaults: NameDefaults): { inputs: IamInputs; problems: Problem[] };
  /** The cloud object whose policy this resource edits (full name). */
  policyName(inputs: IamInputs): string;
  /** The grants these inputs hold in the cloud once applied. */
  claims(inputs: IamInputs): Claim[];
  /** What the resource manages, for messages: "binding (roles/x on projects/…)". */
  describe(inputs: IamInputs): string;
  id(inputs: IamInputs): string;
  outputs(inputs: IamInputs, etag: string): Record<string, unknown>;
  /** What of `inputs` exists in `policy` now; undefined when nothing it owns is there. */
  observe(inputs: IamInputs, policy: Policy): IamInputs | undefined;
  /** The policy edits that take the cloud from `prior` to `desired` (undefined = absent). */
  modifications(prior: IamInputs | undefined, desired: IamInputs | undefined): PolicyModification[];
  parseImportId(id: string, defaults: NameDefaults): ImportTarget | string;
  /** Inputs adopted from a live policy for an import target; a string says why it cannot be. */
  adopt(target: ImportTarget, policy: Policy): IamInputs | string;
}

export interface DataSourceDriver {
  readonly token: string;
  /** The object kind it reads (src/gcp/object-kinds.ts). */
  readonly kind: ObjectKind;
  readonly argsSchema: string;
  readonly resultSchema: string;
  readonly resultNames: readonly string[];
  /** The object to read (full name) from the arguments, or a problem. */
  objectName(args: Record<string, unknown>, defaults: NameDefaults): { name: string } | { problem: Problem };
  /** Reads the object through the cloud port: the function's result. A missing object is an
   *  error whose status is NOT_FOUND. */
  read(cloud: CloudPort, name: string, signal?: AbortSignal): Promise<Record<string, unknown>>;
}
