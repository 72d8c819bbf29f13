// The five REST methods the emulator serves, matched on the path alone (one host:port serves all
// three services; the Host header only decides whether a request is served at all: ./origin.ts).
// The methods come from the neutral object-kind table in src/gcp/.
import { ALL_KINDS, OBJECT_KINDS, type MethodId, type MethodVerb, type ObjectKind } from "../gcp/object-kinds.js";

export { METHOD_IDS, type MethodId } from "../gcp/object-kinds.js";

export interface ApiRoute {
  method: MethodId;
  kind: ObjectKind;
  verb: MethodVerb;
  /** IAM permission the call needs, as named in PERMISSION_DENIED messages. */
  permission: string;
  project: string;
  location: string;
  id: string;
  /** The resource name as the request spelled it (decoded). */
  name: string;
}

interface RouteDef {
  kind: ObjectKind;
  verb: MethodVerb;
  method: MethodId;
  permission: string;
}

// "{HTTP verb} {API version} {collection} {method verb}" → the method.
const INDEX = new Map<string, RouteDef>(
  ALL_KINDS.flatMap((kind) => {
    const k = OBJECT_KINDS[kind];
    return k.methods.map((m): [string, RouteDef] => [`${m.http} ${k.version} ${k.collection} ${m.verb}`, { kind, verb: m.verb, method: m.id, permission: m.permission }]);
  }),
);

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
