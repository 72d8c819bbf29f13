import type { Condition } from "../generated/schemas.js";

/**
 * The identity of a condition: title, description and expression (location is informational).
 * The empty string stands for "no condition", so a conditional and an unconditional binding of
 * the same role are different bindings.
 */
export function conditionKey(condition: Condition | undefined | null): string {
  if (!condition) return "";
  return JSON.stringify([condition.title, condition.description ?? "", condition.expression]);
}

/** The key of a binding within a policy: role plus condition. */
export function bindingKey(role: string, condition: Condition | undefined | null): string {
  return `${role}\u0000${conditionKey(condition)}`;
}

/** A condition stripped to the fields Google stores, in a fixed order (stable JSON, stable diffs). */
export function canonicalCondition(condition: Condition | undefined | null): Condition | undefined {
  if (!condition) return undefined;
  const c: Condition = { expression: condition.expression, title: condition.title };
  if (condition.description !== undefined && condition.description !== "") c.description = condition.description;
  return c;
}
