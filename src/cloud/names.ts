// Full resource names of the cloud objects converge edits, and the short forms a stack may use.
// The neutral name forms live in src/gcp/object-kinds.ts (shared with the emulator).
import { formatName, OBJECT_KINDS, parseFullName, SEGMENT, type ObjectKind, type ObjectName } from "../gcp/object-kinds.js";

export { formatName, kindOfName, parseFullName, SEGMENT, type ObjectKind, type ObjectName } from "../gcp/object-kinds.js";

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
  const expected = `projects/{project}/locations/{location}/${OBJECT_KINDS[kind].collection}/{id}, {location}/{id} or {id}`;
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
