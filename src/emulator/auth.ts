// Callers: a bearer token maps to a principal per project (declared in the seed). Checked before
// the object is looked up, because Google answers 403 for what a caller cannot see.
import type { EmulatorProject } from "../generated/schemas.js";
import { principalIdentity } from "./principals.js";
import { ApiError } from "./errors.js";

const WWW_AUTHENTICATE = { "WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"' };

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : "";
}

/**
 * Checks the caller of one request. `permission` is the IAM permission the method needs
 * (e.g. gkebackup.restorePlans.getIamPolicy); `access` says which of the project's lists apply:
 * iamAdmins may read and write policies, iamViewers only read them; "any" skips both.
 * A project that declares no callers accepts anyone, with or without a token.
 */
export function authorize(
  project: EmulatorProject | undefined,
  authorization: string | undefined,
  permission: string,
  resource: string,
  access: "read" | "write" | "any",
): void {
  if (!project?.callers) return;
  const token = bearer(authorization);
  if (token === undefined) {
    throw unauthenticated("Request is missing required authentication credential.", "CREDENTIALS_MISSING", permission);
  }
  const principal =
    token === ""
      ? undefined
      : Object.prototype.hasOwnProperty.call(project.callers, token)
        ? project.callers[token]
        : undefined;
  if (principal === undefined) {
    throw unauthenticated(
      "Request had invalid authentication credentials.",
      "ACCESS_TOKEN_TYPE_UNSUPPORTED",
      permission,
    );
  }
  if (access !== "any" && project.iamAdmins) {
    const held = principalAccess(project, principal);
    if (held === "none" || (access === "write" && held === "read")) {
      throw new ApiError(
        "PERMISSION_DENIED",
        `Permission '${permission}' denied on resource '${resource}' (or it may not exist).`,
        {
          reason: "IAM_PERMISSION_DENIED",
          metadata: { permission, resource },
        },
      );
    }
  }
}

/** What a principal may do with the project's policies by its caller lists. */
function principalAccess(project: EmulatorProject, principal: string): "write" | "read" | "none" {
  if (!project.iamAdmins) return "write";
  const key = principalIdentity(principal);
  const listed = (list: readonly string[] | undefined): boolean =>
    (list ?? []).some((a) => principalIdentity(a) === key);
  if (listed(project.iamAdmins)) return "write";
  return listed(project.iamViewers) ? "read" : "none";
}

/** What the caller of an authorized request may do; a project without callers lets anyone write. */
export function callerAccess(
  project: EmulatorProject | undefined,
  authorization: string | undefined,
): "write" | "read" | "none" {
  if (!project?.callers) return "write";
  const token = bearer(authorization);
  if (!token || !Object.prototype.hasOwnProperty.call(project.callers, token)) return "none";
  return principalAccess(project, project.callers[token]!);
}

/** Google's 401: `what` is wrong with the request's credentials. */
function unauthenticated(what: string, reason: string, permission: string): ApiError {
  return new ApiError(
    "UNAUTHENTICATED",
    `${what} Expected OAuth 2 access token, login cookie or other valid authentication credential. See ` +
      "https://developers.google.com/identity/sign-in/web/devconsole-project.",
    { reason, metadata: { method: permission }, headers: WWW_AUTHENTICATE },
  );
}
