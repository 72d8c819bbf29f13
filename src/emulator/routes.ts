// The five REST methods the emulator serves, matched on the path alone (one host:port serves all
// three services; the Host header only decides whether a request is served at all: ./origin.ts).
import type { ObjectKind } from "../cloud/names.js";

export const METHOD_IDS = [
  "gkebackup.projects.locations.restorePlans.getIamPolicy",
  "gkebackup.projects.locations.restorePlans.setIamPolicy",
  "aiplatform.projects.locations.endpoints.getIamPolicy",
  "aiplatform.projects.locations.endpoints.setIamPolicy",
  "metastore.projects.locations.federations.get",
] as const;

export type MethodId = (typeof METHOD_IDS)[number];

export interface ApiRoute {
  method: MethodId;
  kind: ObjectKind;
  verb: "getIamPolicy" | "setIamPolicy" | "get";
  /** IAM permission the call needs, as named in PERMISSION_DENIED messages. */
  permission: string;
  project: string;
  location: string;
  id: string;
  /** The resource name as the request spelled it (decoded). */
  name: string;
}

interface RouteDef {
  api: string;
  collection: string;
  kind: ObjectKind;
  verb: ApiRoute["verb"];
  http: string;
  method: MethodId;
  permission: string;
}

const DEFS: RouteDef[] = [
  { api: "v1", collection: "restorePlans", kind: "restorePlan", verb: "getIamPolicy", http: "GET", method: METHOD_IDS[0], permission: "gkebackup.restorePlans.getIamPolicy" },
  { api: "v1", collection: "restorePlans", kind: "restorePlan", verb: "setIamPolicy", http: "POST", method: METHOD_IDS[1], permission: "gkebackup.restorePlans.setIamPolicy" },
  { api: "v1beta1", collection: "endpoints", kind: "endpoint", verb: "getIamPolicy", http: "POST", method: METHOD_IDS[2], permission: "aiplatform.endpoints.getIamPolicy" },
  { api: "v1beta1", collection: "endpoints", kind: "endpoint", verb: "setIamPolicy", http: "POST", method: METHOD_IDS[3], permission: "aiplatform.endpoints.setIamPolicy" },
  { api: "v1alpha", collection: "federations", kind: "federation", verb: "get", http: "GET", method: METHOD_IDS[4], permission: "metastore.federations.get" },
];

const INDEX = new Map(DEFS.map((d) => [`${d.http} ${d.api} ${d.collection} ${d.verb}`, d]));

// Segments as Google accepts them in resource names (no '/', no ':').
const PATH = /^\/(v1|v1beta1|v1alpha)\/projects\/([^/:]+)\/locations\/([^/:]+)\/([A-Za-z]+)\/([^/:]+)(?::([A-Za-z]+))?$/;

/**
 * Matches a decoded path to one of the five methods; undefined for anything else (unknown path
 * or wrong HTTP method), which the server answers with NOT_FOUND.
 */
export function matchApiRoute(httpMethod: string, path: string): ApiRoute | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  const [, api, project, location, collection, id, verb] = m as unknown as [string, string, string, string, string, string, string | undefined];
  const def = INDEX.get(`${httpMethod} ${api} ${collection} ${verb ?? "get"}`);
  if (!def) return undefined;
  return {
    method: def.method,
    kind: def.kind,
    verb: def.verb,
    permission: def.permission,
    project,
    location,
    id,
    name: `projects/${project}/locations/${location}/${collection}/${id}`,
  };
}

/** Percent-decodes a path; undefined when the encoding is malformed. */
export function decodePath(raw: string): string | undefined {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
