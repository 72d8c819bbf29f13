// One implementation for the binding and member types of every object: they differ in token,
// object kind and ownership rule. (Whole-policy types: ./policy-driver.ts.)
import type { Policy } from "../generated/schemas.js";
import { canonicalCondition, conditionKey } from "../iam/conditions.js";
import {
  memberKey,
  memberProblem,
  normalizeMembers,
  normalizeOwnMembers,
  sameMemberSet,
  sameMembersAsWritten,
} from "../iam/members.js";
import { findBinding, type PolicyModification } from "../iam/policy.js";
import { roleProblem } from "../iam/roles.js";
import { completeName, completeNameOnce, projectOf, type NameDefaults } from "../cloud/names.js";
import type { PolicyKind } from "../gcp/object-kinds.js";
import type { IamDriver, IamInputs, ImportTarget, Problem } from "./types.js";
import { extended } from "../base/extended.js";

interface IamDriverSpec {
  token: string;
  kind: PolicyKind;
  ownership: "binding" | "member";
  schemaFile: string;
  typeName: string;
}

export function iamDriver(spec: IamDriverSpec): IamDriver {
  const isBinding = spec.ownership === "binding";
  const importIdForm = isBinding ? "{name} {role} [condition title]" : "{name} {role} {member} [condition title]";

  const normalize = (raw: Record<string, unknown>, defaults: NameDefaults) => normalizeInputs(spec, raw, defaults);

  const id = (i: IamInputs): string => {
    const grant = isBinding ? `${i.name} ${roleOf(i)}` : `${i.name} ${roleOf(i)} ${i.member ?? ""}`;
    return i.condition ? `${grant} ${i.condition.title}` : grant;
  };

  const driver: IamDriver = {
    token: spec.token,
    kind: spec.kind,
    ownership: spec.ownership,
    inputsSchema: `${spec.schemaFile}#/definitions/${spec.typeName}Inputs`,
    outputsSchema: `${spec.schemaFile}#/definitions/${spec.typeName}Outputs`,
    outputNames: [isBinding ? "members" : "member", "name", "role", "condition", "etag", "id", "project"],
    replaceOn: isBinding ? ["name", "role", "condition"] : ["name", "role", "condition", "member"],
    importIdForm,
    normalize,
    inputFields: isBinding ? ["name", "role", "condition", "members"] : ["name", "role", "condition", "member"],
    policyName: (i) => i.name,
    describe: (i) =>
      isBinding ? `binding (${roleOf(i)} on ${i.name})` : `member (${i.member ?? ""}, ${roleOf(i)} on ${i.name})`,
    claims: (i) => [
      isBinding
        ? { scope: "binding", kind: spec.kind, object: i.name, role: roleOf(i), ...cond(i) }
        : { scope: "member", kind: spec.kind, object: i.name, role: roleOf(i), ...cond(i), member: i.member ?? "" },
    ],
    id,
    outputs(i, etag) {
      return extended(i as unknown as Record<string, unknown>, {
        etag,
        id: id(i),
        project: projectOf(spec.kind, i.name),
      });
    },
    observe: (i, policy) => observeGrant(isBinding, i, policy),
    modifications: (prior, desired) => grantModifications(isBinding, prior, desired),
    parseImportId: (text, defaults) => parseImportId(spec, importIdForm, text, defaults),
    adopt: (target, policy) => adoptGrant(isBinding, target, policy),
  };
  return driver;
}

/** What of a binding or member resource the live policy holds (undefined: nothing). */
function observeGrant(isBinding: boolean, i: IamInputs, policy: Policy): IamInputs | undefined {
  const binding = findBinding(policy, roleOf(i), i.condition);
  // A binding of no members is what `members: []` asks for: it holds, it is not gone.
  if (!binding || binding.members.length === 0)
    return isBinding && (i.members ?? []).length === 0 ? extended(i, { members: [] }) : undefined;
  if (isBinding) {
    // Keep the configured spelling when the live set is the same (no permanent case diffs).
    const mine = i.members ?? [];
    const members =
      sameMembersAsWritten(binding.members, mine) || sameMemberSet(binding.members, mine)
        ? mine
        : normalizeMembers(binding.members);
    // `i` itself when the copy would be the same (as a member's observe gives `i`): the
    // refresh keeps what it observes of every resource until the plan is made.
    return members === i.members && Object.hasOwn(i, "members") && Object.getPrototypeOf(i) === Object.prototype
      ? i
      : extended(i, { members });
  }
  const key = memberKey(i.member ?? "");
  return binding.members.some((m) => memberKey(m) === key) ? i : undefined;
}

/** The edits of a policy that take a binding or member resource from `prior` to `desired`. */
function grantModifications(isBinding: boolean, prior?: IamInputs, desired?: IamInputs): PolicyModification[] {
  const mods: PolicyModification[] = [];
  const same = (a: IamInputs, b: IamInputs) =>
    a.name === b.name && roleOf(a) === roleOf(b) && conditionKey(a.condition) === conditionKey(b.condition);
  if (isBinding) {
    if (prior && (!desired || !same(prior, desired)))
      mods.push({ kind: "removeBinding", role: roleOf(prior), ...cond(prior) });
    if (desired)
      mods.push({ kind: "setBinding", role: roleOf(desired), ...cond(desired), members: desired.members ?? [] });
  } else {
    const sameTuple =
      prior && desired && same(prior, desired) && memberKey(prior.member ?? "") === memberKey(desired.member ?? "");
    if (prior && !sameTuple)
      mods.push({ kind: "removeMember", role: roleOf(prior), ...cond(prior), member: prior.member ?? "" });
    if (desired)
      mods.push({ kind: "addMember", role: roleOf(desired), ...cond(desired), member: desired.member ?? "" });
  }
  return mods;
}

const roleOf = (i: IamInputs): string => i.role ?? "";

function cond(i: IamInputs) {
  return i.condition ? { condition: i.condition } : {};
}

/** The members of a binding resource as strings (a new list), with a problem for each bad one. */
function bindingMembers(raw: Record<string, unknown>, problems: Problem[]): string[] {
  if (!Array.isArray(raw.members)) return [];
  const written = raw.members as unknown[];
  const members = new Array<string>(written.length);
  for (let i = 0; i < written.length; i++) {
    // A hole stays a hole (as map and forEach left it).
    if (!(i in written)) continue;
    const m = (members[i] = String(written[i]));
    const p = memberProblem(m);
    if (p) problems.push({ path: ["members", i], message: p });
  }
  return members;
}

/** Completes short names and canonicalises; reports problems with member/role/name forms. */
function normalizeInputs(
  spec: IamDriverSpec,
  raw: Record<string, unknown>,
  defaults: NameDefaults,
): { inputs: IamInputs; problems: Problem[] } {
  const problems: Problem[] = [];
  const inputs: IamInputs & { role: string } = { name: String(raw.name ?? ""), role: String(raw.role ?? "") };
  const named = completeNameOnce(spec.kind, inputs.name, defaults);
  if (typeof named === "string") problems.push({ path: ["name"], message: named });
  else inputs.name = named.full;
  const rp = roleProblem(inputs.role);
  if (rp) problems.push({ path: ["role"], message: rp });
  if (spec.ownership === "binding") inputs.members = normalizeOwnMembers(bindingMembers(raw, problems));
  else {
    inputs.member = String(raw.member ?? "");
    const p = memberProblem(inputs.member);
    if (p) problems.push({ path: ["member"], message: p });
  }
  const cond = canonicalCondition(raw.condition as IamInputs["condition"]);
  if (cond) inputs.condition = cond;
  return { inputs, problems };
}

/**
 * Terraform's import ID forms: "{name} {role} [condition title]", member: "{name} {role} {member} [condition title]".
 */
function parseImportId(
  spec: IamDriverSpec,
  importIdForm: string,
  text: string,
  defaults: NameDefaults,
): ImportTarget | string {
  const isBinding = spec.ownership === "binding";
  // The leading fields have no spaces; the condition title is the rest, spaces kept as written.
  const min = isBinding ? 2 : 3;
  const m = new RegExp(`^\\s*${"(\\S+)\\s+".repeat(min - 1)}(\\S+)(?:\\s(.*))?$`).exec(text);
  if (!m) return `import ID "${text}" is malformed; expected "${importIdForm}"`;
  const parts = m.slice(1, min + 1) as string[];
  const rest = m[min + 1] ?? "";
  const named = completeName(spec.kind, parts[0]!, defaults);
  if (typeof named === "string") return `import ID "${text}": ${named}; expected "${importIdForm}"`;
  const role = parts[1]!;
  const rp = roleProblem(role);
  if (rp) return `import ID "${text}": ${rp}; expected "${importIdForm}"`;
  const target: ImportTarget = { name: named.full, role };
  if (!isBinding) {
    const mp = memberProblem(parts[2]!);
    if (mp) return `import ID "${text}": ${mp}; expected "${importIdForm}"`;
    target.member = parts[2]!;
  }
  if (rest.trim()) target.conditionTitle = rest;
  return target;
}

/** The inputs of an existing grant, adopted by an import. */
function adoptGrant(isBinding: boolean, target: ImportTarget, policy: Policy): IamInputs | string {
  const candidates = (policy.bindings ?? []).filter(
    (b) =>
      b.role === target.role && (target.conditionTitle ? b.condition?.title === target.conditionTitle : !b.condition),
  );
  const what =
    `${roleOf(target)}` +
    `${target.conditionTitle ? ` with condition "${target.conditionTitle}"` : " (unconditional)"}` +
    ` on ${target.name}`;
  if (candidates.length === 0) return `no binding for ${what}`;
  if (candidates.length > 1)
    return `${candidates.length} bindings match ${what}; condition titles must be unique to import`;
  const b = candidates[0]!;
  const base: IamInputs = {
    name: target.name,
    role: roleOf(target),
    ...(b.condition ? { condition: canonicalCondition(b.condition)! } : {}),
  };
  if (isBinding) return { ...base, members: normalizeMembers(b.members) };
  const key = memberKey(target.member ?? "");
  const live = b.members.find((m) => memberKey(m) === key);
  if (!live) return `${target.member} is not a member of ${what}`;
  return { ...base, member: live };
}
