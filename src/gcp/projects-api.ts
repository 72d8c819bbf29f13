// Cloud Resource Manager v3 projects.get, named as Google's reference names it: how a project's
// ID is learnt from its number (projects/123456789012/… and projects/my-project/… name the same
// objects). Neutral facts shared by the client and the emulator, like ./object-kinds.ts.
export const PROJECTS_GET = {
  /** Discovery method ID. */
  id: "cloudresourcemanager.projects.get",
  http: "GET",
  /** API version, the first segment of the REST path: GET /v3/projects/{project ID or number}. */
  version: "v3",
  /** The IAM permission the method needs. */
  permission: "resourcemanager.projects.get",
  /** The service (its host's first label; quotas are kept by it). */
  service: "cloudresourcemanager",
  host: "cloudresourcemanager.googleapis.com",
} as const;
