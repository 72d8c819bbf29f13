// The whole-policy types (RestorePlanIamPolicy, EndpointIamPolicy): authoritative for every
// binding and the audit configs of one object (EndpointIamPolicy has none: aiplatform v1beta1's
// Policy has no auditConfigs). After apply the live policy has exactly the
// resource's bindings and audit configs (none when `auditConfigs` is omitted); destroy leaves an
// empty policy. They claim the whole object, so no other resource of a stack may touch it.
import type { AuditConfig, Binding, Policy } from "../generated/schemas.js";
import { bindingKey, canonicalCondition } from "../iam/conditions.js";
import { memberProblem, normalizeMembers, sameMemberSet } from "../iam/members.js";
import { canonicalBindings, type PolicyModification } from "../iam/policy.js";
import { roleProblem } from "../iam/roles.js";
import { completeName, completeNameOnce, projectOf, type NameDefaults } from "../cloud/names.js";
import type { PolicyKind } from "../gcp/object-kinds.js";
import type { IamDriver, IamInputs, ImportTarget, Problem } from "./types.js";
import { extended } from "../base/extended.js";
import { pushAll } from "../base/arrays.js";

interface PolicyDriverSpec {
  token: string;
  kind: PolicyKind;
  schemaFile: string;
  typeName: string;
  /** The API version's Policy has auditConfigs (aiplatform v1beta1's has none). */
  auditConfigs: boolean;
}

const IMPORT_ID_FORM = "{name}";

export function policyDriver(spec: PolicyDriverSpec): IamDriver {
  const normalize = (raw: Record<string, unknown>, defaults: NameDefaults) =>
    normalizePolicyInputs(spec.kind, spec.auditConfigs ? raw : withoutAuditConfigs(raw), defaults);
  return {
    token: spec.token,
    kind: spec.kind,
    ownership: "policy",
    inputFields: spec.auditConfigs ? ["name", "bindings", "auditConfigs"] : ["name", "bindings"],
    inputsSchema: `${spec.schemaFile}#/definitions/${spec.typeName}Inputs`,
    outputsSchema: `${spec.schemaFile}#/definitions/${spec.typeName}Outputs`,
    outputNames: spec.auditConfigs
      ? ["name", "bindings", "auditConfigs", "etag", "id", "project"]
      : ["name", "bindings", "etag", "id", "project"],
    replaceOn: ["name"],
    importIdForm: IMPORT_ID_FORM,
    normalize,
    policyName: (i) => i.name,
    claims: (i) => [{ scope: "policy", kind: spec.kind, object: i.name }],
    describe: (i) => `whole IAM policy of ${i.name}`,
    id: (i) => i.name,
    outputs(i, etag) {
      const project = projectOf(spec.kind, i.name);
      const audit = spec.auditConfigs ? { auditConfigs: i.auditConfigs ?? [] } : {};
      return { name: i.name, bindings: i.bindings ?? [], ...audit, etag, id: i.name, project };
    },
    observe: (i, policy) => observePolicy(i, policy, spec.auditConfigs),
    modifications: (_prior, desired) => [wholePolicy(desired)],
    parseImportId: (text, defaults) => parsePolicyImportId(spec.kind, text, defaults),
    adopt: (target, policy) => observePolicy({ name: target.name, bindings: [] }, policy, spec.auditConfigs),
  };
}

/** The inputs of a type without audit configs (its schema refuses them where it is checked). */
function withoutAuditConfigs(raw: Record<string, unknown>): Record<string, unknown> {
  const { auditConfigs: _none, ...rest } = raw;
  return rest;
}

/** The edit that makes the object's policy `desired`'s (an empty one when it is gone). */
function wholePolicy(desired: IamInputs | undefined): PolicyModification {
  return { kind: "setPolicy", bindings: desired?.bindings ?? [], auditConfigs: desired?.auditConfigs ?? [] };
}

/** The live policy as this resource's inputs; the configured spelling of a binding's members
 *  is kept when the live set is the same (no permanent case diffs). */
function observePolicy(i: IamInputs, policy: Policy, auditConfigs: boolean): IamInputs {
  const configured = new Map((i.bindings ?? []).map((b) => [bindingKey(b.role, b.condition), b]));
  const bindings = canonicalBindings(policy.bindings ?? []).map((b) => {
    const mine = configured.get(bindingKey(b.role, b.condition));
    return mine && sameMemberSet(mine.members, b.members) ? extended(b, { members: mine.members }) : b;
  });
  if (!auditConfigs) return { name: i.name, bindings };
  return { name: i.name, bindings, auditConfigs: policy.auditConfigs ?? [] };
}

function normalizePolicyInputs(
  kind: PolicyKind,
  raw: Record<string, unknown>,
  defaults: NameDefaults,
): { inputs: IamInputs; problems: Problem[] } {
  const problems: Problem[] = [];
  const inputs: IamInputs = { name: String(raw.name ?? "") };
  const named = completeNameOnce(kind, inputs.name, defaults);
  if (typeof named === "string") problems.push({ path: ["name"], message: named });
  else inputs.name = named.full;
  // An entry that is not an object (the schema check reports it) reads as an empty binding.
  const rawBindings = (Array.isArray(raw.bindings) ? (raw.bindings as unknown[]) : []).map(
    (b) => (b && typeof b === "object" ? b : {}) as Binding,
  );
  const seen = new Map<string, number>();
  rawBindings.forEach((b, i) => pushAll(problems, bindingProblems(b, i, seen)));
  inputs.bindings = rawBindings.map((b) => {
    const condition = canonicalCondition(b.condition);
    return {
      role: String(b.role ?? ""),
      members: normalizeMembers((Array.isArray(b.members) ? b.members : []).map(String)),
      ...(condition ? { condition } : {}),
    };
  });
  if (Array.isArray(raw.auditConfigs)) {
    inputs.auditConfigs = raw.auditConfigs as AuditConfig[];
    pushAll(problems, exemptedMemberProblems(inputs.auditConfigs));
  }
  return { inputs, problems };
}

/** Exempted members are members: the same forms as a binding's. */
function exemptedMemberProblems(configs: readonly AuditConfig[]): Problem[] {
  const out: Problem[] = [];
  configs.forEach((c, i) =>
    (Array.isArray(c?.auditLogConfigs) ? c.auditLogConfigs : []).forEach((l, j) =>
      (Array.isArray(l?.exemptedMembers) ? l.exemptedMembers : []).forEach((m, k) => {
        const p = memberProblem(String(m));
        if (p) out.push({ path: ["auditConfigs", i, "auditLogConfigs", j, "exemptedMembers", k], message: p });
      }),
    ),
  );
  return out;
}

/** The problems of one binding of a policy resource; `seen` finds a (role, condition) repeated. */
function bindingProblems(b: Binding, i: number, seen: Map<string, number>): Problem[] {
  const out: Problem[] = [];
  const role = String(b?.role ?? "");
  const rp = roleProblem(role);
  if (rp) out.push({ path: ["bindings", i, "role"], message: rp });
  (Array.isArray(b?.members) ? b.members : []).forEach((m, j) => {
    const p = memberProblem(String(m));
    if (p) out.push({ path: ["bindings", i, "members", j], message: p });
  });
  const key = bindingKey(role, b?.condition);
  const first = seen.get(key);
  if (first !== undefined)
    out.push({
      path: ["bindings", i, "role"],
      message:
        `bindings[${i}] repeats the role ${role}` +
        `${b.condition ? ` with condition "${b.condition.title}"` : ""} of bindings[${first}]; merge their ` +
        `members into one binding`,
    });
  else seen.set(key, i);
  return out;
}

/** Terraform's import ID of a whole-policy resource: the object's name. */
function parsePolicyImportId(kind: PolicyKind, text: string, defaults: NameDefaults): ImportTarget | string {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 1 || !parts[0])
    return (
      `import ID "${text}" is malformed; expected "${IMPORT_ID_FORM}" (a policy ` +
      `resource imports the whole policy of one object)`
    );
  const named = completeName(kind, parts[0], defaults);
  if (typeof named === "string") return `import ID "${text}": ${named}; expected "${IMPORT_ID_FORM}"`;
  return { name: named.full };
}
