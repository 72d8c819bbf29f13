// Comparisons of IAM inputs that know the semantics (member case, member order, conditions).
import type { IamDriver, IamInputs, InputField } from "../drivers/types.js";
import { sameAuditConfigs, sameBindings } from "../iam/policy.js";
import { containsUnknown, isUnknown } from "../language/expressions.js";
import { conditionKey } from "../iam/conditions.js";
import { memberKey, sameMemberSet, sameMembersAsWritten } from "../iam/members.js";

export type { InputField };

/** Whether two inputs agree on one field (unknown counts as different). */
export function fieldEqual(field: InputField, a: IamInputs, b: IamInputs): boolean {
  const x = a[field];
  const y = b[field];
  if (isUnknown(x) || isUnknown(y)) return false;
  switch (field) {
    case "condition":
      return x === y || conditionKey(a.condition) === conditionKey(b.condition);
    case "members":
      return (
        Array.isArray(x) &&
        Array.isArray(y) &&
        !x.some(isUnknown) &&
        !y.some(isUnknown) &&
        (sameMembersAsWritten(x, y) || sameMemberSet(a.members ?? [], b.members ?? []))
      );
    case "member":
      return typeof x === "string" && typeof y === "string" && (x === y || memberKey(x) === memberKey(y));
    case "bindings":
      return (
        Array.isArray(x) &&
        Array.isArray(y) &&
        !containsUnknown(x) &&
        !containsUnknown(y) &&
        sameBindings(a.bindings ?? [], b.bindings ?? [])
      );
    case "auditConfigs":
      return !containsUnknown(x) && !containsUnknown(y) && sameAuditConfigs(a.auditConfigs, b.auditConfigs);
    default:
      return x === y;
  }
}

/** Fields whose values differ (unknown counts as different). A loop, not a filter with a
 *  closure: it runs twice for each resource a plan compares. */
export function changedFields(driver: IamDriver, a: IamInputs, b: IamInputs): InputField[] {
  const out: InputField[] = [];
  const fields = driver.inputFields;
  for (let i = 0; i < fields.length; i++) if (!fieldEqual(fields[i]!, a, b)) out.push(fields[i]!);
  return out;
}

/** changedFields(...).length === 0, stopping at the first difference (fieldEqual is pure). */
export function sameInputs(driver: IamDriver, a: IamInputs, b: IamInputs): boolean {
  const fields = driver.inputFields;
  for (let i = 0; i < fields.length; i++) if (!fieldEqual(fields[i]!, a, b)) return false;
  return true;
}

/** Structural equality for JSON-like values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b as object, k) &&
        jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}
