// The three kinds of Google Cloud object converge reads or edits, named as Google's APIs name
// them: service, API version, collection, the REST methods (discovery ID, HTTP verb, IAM
// permission) and the form of a full resource name. Neutral facts shared by the client and the
// emulator: nothing here decides whether a policy, a member or a role is valid.

export type ObjectKind = "restorePlan" | "endpoint" | "federation";
/** The kinds that carry an IAM policy. */
export type PolicyKind = Exclude<ObjectKind, "federation">;
export type Service = "gkebackup" | "aiplatform" | "metastore";
export type MethodVerb = "getIamPolicy" | "setIamPolicy" | "get";

export interface ApiMethod {
  verb: MethodVerb;
  /** Discovery method ID, e.g. gkebackup.projects.locations.restorePlans.getIamPolicy. */
  id: string;
  http: "GET" | "POST";
  /** The IAM permission the method needs. */
  permission: string;
}

export interface ObjectKindInfo {
  kind: ObjectKind;
  service: Service;
  /** API version, the first segment of a REST path (/v1/projects/…). */
  version: "v1" | "v1beta1" | "v1alpha";
  collection: "restorePlans" | "endpoints" | "federations";
  /** What people call one object of the kind, in messages: "restore plan". */
  label: string;
  /** The name form as Google's reference spells it. */
  nameForm: string;
  methods: readonly ApiMethod[];
}

export const OBJECT_KINDS = {
  restorePlan: {
    kind: "restorePlan",
    service: "gkebackup",
    version: "v1",
    collection: "restorePlans",
    label: "restore plan",
    nameForm: "projects/{project}/locations/{location}/restorePlans/{restorePlan}",
    methods: [
      {
        verb: "getIamPolicy",
        id: "gkebackup.projects.locations.restorePlans.getIamPolicy",
        http: "GET",
        permission: "gkebackup.restorePlans.getIamPolicy",
      },
      {
        verb: "setIamPolicy",
        id: "gkebackup.projects.locations.restorePlans.setIamPolicy",
        http: "POST",
        permission: "gkebackup.restorePlans.setIamPolicy",
      },
    ],
  },
  endpoint: {
    kind: "endpoint",
    service: "aiplatform",
    version: "v1beta1",
    collection: "endpoints",
    label: "endpoint",
    nameForm: "projects/{project}/locations/{location}/endpoints/{endpoint}",
    methods: [
      {
        verb: "getIamPolicy",
        id: "aiplatform.projects.locations.endpoints.getIamPolicy",
        http: "POST",
        permission: "aiplatform.endpoints.getIamPolicy",
      },
      {
        verb: "setIamPolicy",
        id: "aiplatform.projects.locations.endpoints.setIamPolicy",
        http: "POST",
        permission: "aiplatform.endpoints.setIamPolicy",
      },
    ],
  },
  federation: {
    kind: "federation",
    service: "metastore",
    version: "v1alpha",
    collection: "federations",
    label: "federation",
    nameForm: "projects/{project}/locations/{location}/federations/{federationId}",
    methods: [
      {
        verb: "get",
        id: "metastore.projects.locations.federations.get",
        http: "GET",
        permission: "metastore.federations.get",
      },
    ],
  },
} as const satisfies Record<ObjectKind, ObjectKindInfo>;

export const ALL_KINDS: readonly ObjectKind[] = ["restorePlan", "endpoint", "federation"];

/** The kinds that carry an IAM policy (they have getIamPolicy), in table order. */
export const POLICY_KINDS: readonly PolicyKind[] = ALL_KINDS.filter(
  (k): k is PolicyKind => apiMethod(k, "getIamPolicy") !== undefined,
);

export function isPolicyKind(kind: ObjectKind | undefined): kind is PolicyKind {
  return kind !== undefined && (POLICY_KINDS as readonly ObjectKind[]).includes(kind);
}

/** "restore plan", "endpoint"… */
export function kindLabel(kind: ObjectKind): string {
  return OBJECT_KINDS[kind].label;
}

/** Every method's discovery ID, in table order. */
export const METHOD_IDS = ALL_KINDS.flatMap((k) => OBJECT_KINDS[k].methods.map((m) => m.id)) as MethodId[];
export type MethodId = (typeof OBJECT_KINDS)[ObjectKind]["methods"][number]["id"];

/** The method of `kind` with this verb; undefined when the kind has no such method. */
export function apiMethod(kind: ObjectKind, verb: MethodVerb): ApiMethod | undefined {
  return (OBJECT_KINDS[kind].methods as readonly ApiMethod[]).find((m) => m.verb === verb);
}

/** The discovery method ID of a policy call, e.g. gkebackup.projects.locations.restorePlans.setIamPolicy. */
export function policyMethodId(kind: PolicyKind, verb: "getIamPolicy" | "setIamPolicy"): MethodId {
  return apiMethod(kind, verb)!.id as MethodId;
}

// --- full resource names -----------------------------------------------------------------------

export interface ObjectName {
  kind: ObjectKind;
  project: string;
  location: string;
  id: string;
  /** projects/{project}/locations/{location}/{collection}/{id} */
  full: string;
}

/** One segment of a resource name: a project ID, a location or an object ID. */
export const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function formatName(kind: ObjectKind, project: string, location: string, id: string): string {
  return `projects/${project}/locations/${location}/${OBJECT_KINDS[kind].collection}/${id}`;
}

/** Parses a full name of the given kind; undefined when it is not one. */
export function parseFullName(kind: ObjectKind, name: string): ObjectName | undefined {
  const parts = name.split("/");
  if (parts.length !== 6) return undefined;
  const [p, project, l, location, c, id] = parts as [string, string, string, string, string, string];
  if (p !== "projects" || l !== "locations" || c !== OBJECT_KINDS[kind].collection) return undefined;
  if (![project, location, id].every((s) => SEGMENT.test(s))) return undefined;
  return { kind, project, location, id, full: name };
}

/** Identifies which kind of object a full name designates, if any. */
export function kindOfName(name: string): ObjectKind | undefined {
  return ALL_KINDS.find((kind) => parseFullName(kind, name) !== undefined);
}
