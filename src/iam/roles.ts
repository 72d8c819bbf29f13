import { LONE_SURROGATE } from "./members.js";

// Role forms. Roles are checked for their form only: custom roles need no declaration.

const ROLE_FORMS = [
  /^roles\/[A-Za-z0-9_.]+$/,
  /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/roles\/[A-Za-z0-9_.]{3,64}$/,
  /^organizations\/[0-9]+\/roles\/[A-Za-z0-9_.]{3,64}$/,
];

const ROLE_FORMS_TEXT = "roles/{name}, projects/{project}/roles/{name} or organizations/{id}/roles/{name}";

export function roleProblem(role: string): string | undefined {
  if (typeof role !== "string" || role.length === 0) return "a role must be a non-empty string";
  if (LONE_SURROGATE.test(role)) return `role ${JSON.stringify(role)} is not valid Unicode`;
  return ROLE_FORMS.some((r) => r.test(role)) ? undefined : `role "${role}" is not of the form ${ROLE_FORMS_TEXT}`;
}

const BASIC_ROLES = ["roles/owner", "roles/editor", "roles/viewer"] as const;

export function isBasicRole(role: string): boolean {
  return (BASIC_ROLES as readonly string[]).includes(role);
}
