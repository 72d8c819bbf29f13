// The shape of what the cloud answers, checked before converge uses it: a policy whose members
// are a string, whose bindings are an object or lack a role, or a federation whose labels are not
// a map, is a clear error naming the call, never a policy misread (a string's characters taken
// for members) or a crash further on. Checked against the same JSON schemas as everything else.
import { validate, type ErrorObject } from "../schemas/index.js";
import { schemaProblem } from "../schemas/problem.js";

/** Fields the API may add after this version: unknown properties are kept, not refused. */
const addedLater = (e: ErrorObject) => e.keyword === "additionalProperties";

/** Why `value` is not an IAM policy (undefined when it is one). */
export function policyProblem(value: unknown): string | undefined {
  const errors = validate("iam-policy.schema.json", value).filter((e) => !addedLater(e));
  return errors.length ? `the response is not a valid IAM policy: ${schemaProblem(errors)}` : undefined;
}

/**
 * Why `value` is not a federation. Only types and required fields count: a federation is read,
 * never written back, and a state or date format this version does not know is no reason to fail.
 */
export function federationProblem(value: unknown): string | undefined {
  const errors = validate("types/get-federation.schema.json#/definitions/Federation", value).filter(
    (e) => e.keyword === "type" || e.keyword === "required",
  );
  return errors.length ? `the response is not a valid federation: ${schemaProblem(errors)}` : undefined;
}

/** What converge reads of a Resource Manager v3 Project: its ID and its name (`projects/{number}`). */
export function projectProblem(value: unknown): string | undefined {
  const v = value as { projectId?: unknown; name?: unknown } | null;
  if (typeof v !== "object" || v === null || Array.isArray(v))
    return "the response is not a valid project: expected an object";
  // A project ID starts with a letter (never all digits: that is a number) and fits in a name's segment.
  if (typeof v.projectId !== "string" || !/^[A-Za-z][A-Za-z0-9_.-]*$/.test(v.projectId))
    return "the response is not a valid project: projectId is not a project ID";
  if (typeof v.name !== "string" || !/^projects\/[0-9]+$/.test(v.name))
    return "the response is not a valid project: name is not projects/{number}";
  return undefined;
}
