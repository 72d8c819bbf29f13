// testIamPermissions: which of the asked permissions the caller holds on an object. The emulator
// grants by the project's caller lists (see auth.ts): iamAdmins hold every permission of the
// object's service, iamViewers its read permissions (get…, list…), other callers none; a project
// that declares no callers (or no iamAdmins) grants everything.
import type { EmulatorProject } from "../generated/schemas.js";
import { callerAccess } from "./auth.js";
import { invalidArgument } from "./errors.js";

const PERMISSION = /^[a-z][a-z0-9]*\.[A-Za-z][A-Za-z0-9]*\.[A-Za-z][A-Za-z0-9]*$/;

/** Refuses a wildcard or malformed permission as Google does; returns the list. */
export function checkPermissions(permissions: string[], field: string): string[] {
  permissions.forEach((p, i) => {
    const at = `${field}[${i}]`;
    if (p.includes("*")) {
      throw invalidArgument(`Permissions with wildcards (such as '*' or 'storage.*') are not allowed: "${p}".`, at, {
        permission: p,
      });
    }
    if (!PERMISSION.test(p))
      throw invalidArgument(`Invalid permission "${p}": expected {service}.{resource}.{verb}.`, at, { permission: p });
  });
  return permissions;
}

const READ_VERB = /^(get|list)/;

/** The asked permissions the caller holds on an object of `service`, in the order asked, once each. */
export function heldPermissions(
  project: EmulatorProject | undefined,
  authorization: string | undefined,
  service: string,
  asked: string[],
): string[] {
  const access = callerAccess(project, authorization);
  const held = asked.filter((p) => {
    const [svc, , verb] = p.split(".") as [string, string, string];
    if (svc !== service || access === "none") return false;
    return access === "write" || READ_VERB.test(verb);
  });
  return [...new Set(held)];
}
