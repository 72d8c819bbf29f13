// Role names as Google accepts them in a binding. The emulator has no role catalogue, so it checks
// the form only (Google's reference: predefined roles/{name}; custom roles
// projects/{project ID}/roles/{role ID} and organizations/{organization ID}/roles/{role ID}, a role
// ID being 3 to 64 letters, digits, underscores and periods). Independent of src/iam/.

// A project ID: 6 to 30 lowercase letters, digits and hyphens, starting with a letter, not ending
// with a hyphen.
const PROJECT_ID = "[a-z][a-z0-9-]{4,28}[a-z0-9]";
const ROLE_ID = "[A-Za-z0-9_.]{3,64}";

const FORMS: readonly RegExp[] = [
  /^roles\/[A-Za-z0-9_.]+$/,
  new RegExp(`^projects/${PROJECT_ID}/roles/${ROLE_ID}$`),
  new RegExp(`^organizations/[0-9]+/roles/${ROLE_ID}$`),
];

/** Google's basic roles (formerly "primitive"): they cannot carry a condition. */
const BASIC = new Set(["roles/owner", "roles/editor", "roles/viewer"]);

/** Why `role` is not a role name Google accepts; undefined when it is. */
export function roleNameProblem(role: unknown): string | undefined {
  if (typeof role !== "string" || role === "") return "a role must be a non-empty string";
  if (FORMS.some((f) => f.test(role))) return undefined;
  return (
    `role "${role}" is not of the form roles/{name}, ` +
    `projects/{project}/roles/{id} or organizations/{organization}/roles/{id}`
  );
}

export function isBasicRole(role: string): boolean {
  return BASIC.has(role);
}
