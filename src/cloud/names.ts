// Full resource names of the cloud objects converge edits, and the short forms a stack may use.

export type ObjectKind = "restorePlan" | "endpoint" | "federation";

const COLLECTION: Record<ObjectKind, string> = {
  restorePlan: "restorePlans",
  endpoint: "endpoints",
  federation: "federations",
};

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
  return `projects/${project}/locations/${location}/${COLLECTION[kind]}/${id}`;
}

/** Parses a full name of the given kind; undefined when it is not one. */
export function parseFullName(kind: ObjectKind, name: string): ObjectName | undefined {
  const parts = name.split("/");
  if (parts.length !== 6) return undefined;
  const [p, project, l, location, c, id] = parts as [string, string, string, string, string, string];
  if (p !== "projects" || l !== "locations" || c !== COLLECTION[kind]) return undefined;
  if (![project, location, id].every((s) => SEGMENT.test(s))) return undefined;
  return { kind, project, location, id, full: name };
}

export interface NameDefaults {
  project?: string | undefined;
  location?: string | undefined;
}

/**
 * Completes a full name from `{location}/{id}` or `{id}` using the stack's provider defaults.
 * Returns an error text (what was expected) when the name cannot be completed.
 */
export function completeName(kind: ObjectKind, name: string, defaults: NameDefaults): ObjectName | string {
  const full = parseFullName(kind, name);
  if (full) return full;
  const expected = `projects/{project}/locations/{location}/${COLLECTION[kind]}/{id}, {location}/{id} or {id}`;
  if (name.startsWith("projects/")) return `"${name}" is not a valid ${kind} name; expected ${expected}`;
  const parts = name.split("/");
  if (parts.length > 2 || !parts.every((s) => SEGMENT.test(s))) {
    return `"${name}" is not a valid ${kind} name; expected ${expected}`;
  }
  const id = parts[parts.length - 1]!;
  const location = parts.length === 2 ? parts[0] : defaults.location;
  if (!defaults.project) return `"${name}" is a short name but provider.project is not set; use ${expected}`;
  if (!location) return `"${name}" is a short name but provider.location is not set; use ${expected}`;
  return { kind, project: defaults.project, location, id, full: formatName(kind, defaults.project, location, id) };
}

/** Identifies which kind of object a full name designates, if any. */
export function kindOfName(name: string): ObjectKind | undefined {
  for (const kind of Object.keys(COLLECTION) as ObjectKind[]) if (parseFullName(kind, name)) return kind;
  return undefined;
}
