// The REST methods the emulator serves, matched on the path alone (one host:port serves every
// service; the Host header only decides whether a request is served at all: ./origin.ts).
// The object methods converge calls come from the neutral object-kind table in src/gcp/, and Cloud Resource
// Manager's projects.get from its neutral description there.
import {
  ALL_KINDS,
  METHOD_IDS as OBJECT_METHOD_IDS,
  OBJECT_KINDS,
  type ApiMethod,
  type MethodId as ObjectMethodId,
  type MethodVerb,
  type ObjectKind,
  POLICY_KINDS,
  type PolicyKind,
} from "../gcp/object-kinds.js";
import { PROJECTS_GET } from "../gcp/projects-api.js";
import { LIST_METHOD_IDS, LIST_METHODS, LOCATION_LISTS, type ListMethod } from "../gcp/list-methods.js";

export { PROJECTS_GET } from "../gcp/projects-api.js";

/** What a method does: src/gcp/'s verbs, and testIamPermissions (which converge does not call). */
export type EmulatorVerb = MethodVerb | "testIamPermissions";

/** A method the emulator serves beyond those converge's client calls (named in src/gcp/): the
 *  rest of each collection's IAM surface, as the vendored discovery documents describe it. */
interface ExtraMethod {
  kind: ObjectKind;
  verb: EmulatorVerb;
  id: string;
  http: "GET" | "POST";
  permission: string;
}

/** testIamPermissions needs no permission: it answers which of the asked ones the caller holds. */
function testPermissions<K extends ObjectKind, I extends string>(kind: K, id: I) {
  return { kind, verb: "testIamPermissions", id, http: "POST", permission: "" } as const;
}

const EXTRA_METHODS = [
  testPermissions("restorePlan", "gkebackup.projects.locations.restorePlans.testIamPermissions"),
  testPermissions("endpoint", "aiplatform.projects.locations.endpoints.testIamPermissions"),
  {
    kind: "federation",
    verb: "getIamPolicy",
    id: "metastore.projects.locations.federations.getIamPolicy",
    http: "GET",
    permission: "metastore.federations.getIamPolicy",
  },
  {
    kind: "federation",
    verb: "setIamPolicy",
    id: "metastore.projects.locations.federations.setIamPolicy",
    http: "POST",
    permission: "metastore.federations.setIamPolicy",
  },
  testPermissions("federation", "metastore.projects.locations.federations.testIamPermissions"),
] as const satisfies readonly ExtraMethod[];

type ServedObjectMethodId = ObjectMethodId | (typeof EXTRA_METHODS)[number]["id"];

/** Every method the emulator serves (counted in stats, named in fault filters). */
export type MethodId = ServedObjectMethodId | typeof PROJECTS_GET.id | (typeof LIST_METHOD_IDS)[number];
export const METHOD_IDS: readonly MethodId[] = [
  ...OBJECT_METHOD_IDS,
  ...EXTRA_METHODS.map((m) => m.id),
  PROJECTS_GET.id,
  ...LIST_METHOD_IDS,
];

/** A call of one of the object methods. */
export interface ApiRoute {
  method: ServedObjectMethodId;
  kind: ObjectKind;
  verb: EmulatorVerb;
  /** IAM permission the call needs, as named in PERMISSION_DENIED messages ("" for none). */
  permission: string;
  project: string;
  location: string;
  id: string;
  /** The resource name as the request spelled it (decoded). */
  name: string;
}

/** A call of projects.get. */
export interface ProjectRoute {
  kind: "project";
  method: typeof PROJECTS_GET.id;
  /** The project ID or number as the request spelled it (decoded). */
  project: string;
}

/** A call of a collection's list (location given) or of its service's projects.locations.list. */
export interface ListRoute {
  kind: "list";
  method: (typeof LIST_METHOD_IDS)[number];
  /** The kind whose collection (or whose service's locations) is listed. */
  of: PolicyKind;
  list: ListMethod;
  /** The project ID or number as the request spelled it (decoded). */
  project: string;
  location?: string;
  /** The parent as the request spelled it: projects/{p} or projects/{p}/locations/{l}. */
  parent: string;
}

export type EmulatorRoute = ApiRoute | ProjectRoute | ListRoute;

interface RouteDef {
  kind: ObjectKind;
  verb: EmulatorVerb;
  method: ServedObjectMethodId;
  permission: string;
}

// "{HTTP verb} {API version} {collection} {method verb}" → the method.
const INDEX = new Map<string, RouteDef>();
for (const kind of ALL_KINDS) {
  const k = OBJECT_KINDS[kind];
  const methods: readonly (ApiMethod | ExtraMethod)[] = k.methods;
  for (const m of [...methods, ...EXTRA_METHODS.filter((e) => e.kind === kind)]) {
    INDEX.set(`${m.http} ${k.version} ${k.collection} ${m.verb}`, {
      kind,
      verb: m.verb,
      method: m.id as ServedObjectMethodId,
      permission: m.permission,
    });
  }
}

// Segments as Google accepts them in resource names (no '/', no ':').
const PATH =
  /^\/(v1|v1beta1|v1alpha)\/projects\/([^/:]+)\/locations\/([^/:]+)\/([A-Za-z]+)\/([^/:]+)(?::([A-Za-z]+))?$/;

/**
 * Matches a decoded path to one of the object methods; undefined for anything else (unknown path
 * or wrong HTTP method), which the server answers with NOT_FOUND.
 */
function matchApiRoute(httpMethod: string, path: string): ApiRoute | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  const [, api, project, location, collection, id, verb] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
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

// One segment, as for the object methods: an empty one, or one with '/' or ':', matches nothing.
const PROJECT_PATH = new RegExp(`^/${PROJECTS_GET.version}/projects/([^/:]+)$`);

const LIST_PATH = /^\/(v1|v1beta1|v1alpha)\/projects\/([^/:]+)\/locations(?:\/([^/:]+)\/([A-Za-z]+))?$/;

/** Matches a decoded GET path to a list method; undefined for anything else. */
export function matchListRoute(httpMethod: string, path: string): ListRoute | undefined {
  const m = httpMethod === "GET" ? LIST_PATH.exec(path) : null;
  if (!m) return undefined;
  const [, version, project, location, collection] = m as unknown as [string, string, string, string?, string?];
  const served = (k: PolicyKind): boolean =>
    OBJECT_KINDS[k].version === version && (location === undefined || OBJECT_KINDS[k].collection === collection);
  const of = POLICY_KINDS.find(served);
  if (!of) return undefined;
  const list = location === undefined ? LOCATION_LISTS[of] : LIST_METHODS[of];
  const parent = location === undefined ? `projects/${project}` : `projects/${project}/locations/${location}`;
  const method = list.id as ListRoute["method"];
  return { kind: "list", method, of, list, project, parent, ...(location !== undefined ? { location } : {}) };
}

/** Matches a decoded path to any method the emulator serves; undefined answers NOT_FOUND. */
export function matchRoute(httpMethod: string, path: string): EmulatorRoute | undefined {
  const p = httpMethod === PROJECTS_GET.http ? PROJECT_PATH.exec(path) : null;
  if (p) return { kind: "project", method: PROJECTS_GET.id, project: p[1]! };
  return matchApiRoute(httpMethod, path) ?? matchListRoute(httpMethod, path);
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
