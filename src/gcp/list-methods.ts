// The list methods of the two services whose objects carry policies, named as Google's discovery
// documents name them: each collection's `list` (projects.locations.restorePlans.list,
// projects.locations.endpoints.list) and each service's `projects.locations.list`. Neutral facts
// shared by the client and the emulator, like ./object-kinds.ts.
import { OBJECT_KINDS, type PolicyKind } from "./object-kinds.js";

export interface ListMethod {
  /** Discovery method ID. */
  id: string;
  /** The IAM permission the method needs on the parent. */
  permission: string;
  /** The field of the response that holds the page's items. */
  field: string;
  /** The method's query parameters beyond the system ones (the discovery document's). */
  parameters: readonly string[];
}

/** Each policy kind's collection `list`: GET /{version}/projects/{p}/locations/{l}/{collection}. */
export const LIST_METHODS: Readonly<Record<PolicyKind, ListMethod>> = {
  restorePlan: {
    id: "gkebackup.projects.locations.restorePlans.list",
    permission: "gkebackup.restorePlans.list",
    field: "restorePlans",
    parameters: ["pageSize", "pageToken", "filter", "orderBy"],
  },
  endpoint: {
    id: "aiplatform.projects.locations.endpoints.list",
    permission: "aiplatform.endpoints.list",
    field: "endpoints",
    // aiplatform v1beta1 (revision 20231121) has no orderBy on this method.
    parameters: ["pageSize", "pageToken", "filter", "readMask"],
  },
};

/** Each policy kind's service's `projects.locations.list`: GET /{version}/projects/{p}/locations. */
export const LOCATION_LISTS: Readonly<Record<PolicyKind, ListMethod>> = {
  restorePlan: {
    id: "gkebackup.projects.locations.list",
    permission: "gkebackup.locations.list",
    field: "locations",
    parameters: ["pageSize", "pageToken", "filter"],
  },
  endpoint: {
    id: "aiplatform.projects.locations.list",
    permission: "aiplatform.locations.list",
    field: "locations",
    parameters: ["pageSize", "pageToken", "filter"],
  },
};

/** The REST path of a collection's list (location given) or of the service's locations list. */
export function listPath(kind: PolicyKind, project: string, location?: string): string {
  const k = OBJECT_KINDS[kind];
  const parent = `/${k.version}/projects/${project}/locations`;
  return location === undefined ? parent : `${parent}/${location}/${k.collection}`;
}

export const LIST_METHOD_IDS = [
  LIST_METHODS.restorePlan.id,
  LIST_METHODS.endpoint.id,
  LOCATION_LISTS.restorePlan.id,
  LOCATION_LISTS.endpoint.id,
] as const;
