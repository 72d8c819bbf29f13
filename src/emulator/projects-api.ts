// Cloud Resource Manager v3 projects.get (GET /v3/projects/{projectIdOrNumber}), as Google answers
// it: https://cloud.google.com/resource-manager/reference/rest/v3/projects/get. Clients use it to
// learn a project's ID from its number, since projects/123456789012/… and projects/my-project/…
// name the same objects.
//
// A project is answered when the world declares it (seed `projects:`, by ID or by its number)
// with a number: Google's Project is always named projects/{number}, and the emulator invents
// no number. Every other project — unknown, only implied by the objects in it, or declared
// without a number — gets the 403 Google sends for a project that does not exist or that the
// caller may not see. That is consistent with the object methods serving such a project's
// objects: permission on a restore plan does not grant resourcemanager.projects.get, so a real
// caller meets this very answer, and clients must handle it anyway.
//
// The Project carries only what the world knows: name, projectId, state and displayName (the
// ID, as for a project created without one). parent, createTime, updateTime and etag are left
// out rather than made up.
import type { IncomingHttpHeaders } from "node:http";
import { headerValue, wantsIntEnums } from "./api.js";
import { authorize } from "./auth.js";
import { ok, type EmulatorContext, type Reply } from "./context.js";
import { ApiError } from "./errors.js";
import { PROJECTS_GET, type ProjectRoute } from "./routes.js";

/** Project.State: STATE_UNSPECIFIED 0, ACTIVE 1, DELETE_REQUESTED 2. */
const ACTIVE = { name: "ACTIVE", number: 1 } as const;

/** Google's answer for a project that does not exist or that the caller may not see. */
function projectDenied(segment: string): ApiError {
  const { permission, host } = PROJECTS_GET;
  return new ApiError(
    "PERMISSION_DENIED",
    `Permission '${permission}' denied on resource '//${host}/projects/${segment}' (or it may not exist).`,
    {
      reason: "IAM_PERMISSION_DENIED",
      metadata: { permission, resource: `projects/${segment}` },
    },
  );
}

export function handleProjectGet(
  ctx: EmulatorContext,
  route: ProjectRoute,
  query: URLSearchParams | undefined,
  headers: IncomingHttpHeaders,
): Reply {
  const id = ctx.store.projectId(route.project);
  const project = ctx.store.project(id);
  // As for the object methods: a project that declares callers wants one of their tokens.
  authorize(project, headerValue(headers.authorization), PROJECTS_GET.permission, `projects/${route.project}`, "any");
  if (!project?.number) throw projectDenied(route.project);
  return ok(
    JSON.stringify({
      name: `projects/${project.number}`,
      projectId: id,
      state: wantsIntEnums(query) ? ACTIVE.number : ACTIVE.name,
      displayName: id,
    }),
  );
}
