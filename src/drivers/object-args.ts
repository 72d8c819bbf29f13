// The arguments by which a function names the object it reads, as google-native spells them:
// `{kind}Id`, `location` and `project` (defaulting to provider.project).
import { formatName, SEGMENT, type NameDefaults } from "../cloud/names.js";
import type { ObjectKind } from "../gcp/object-kinds.js";
import type { Problem } from "./types.js";

export function objectNameFromArgs(
  kind: ObjectKind,
  idKey: string,
  args: Record<string, unknown>,
  defaults: NameDefaults,
): { name: string } | { problem: Problem } {
  const project = (args.project as string | undefined) ?? defaults.project;
  if (!project)
    return { problem: { path: ["project"], message: "project is not set and provider.project has no default" } };
  for (const [key, v] of [
    [idKey, args[idKey]],
    ["location", args.location],
    ["project", project],
  ] as const) {
    if (typeof v !== "string" || !SEGMENT.test(v))
      return { problem: { path: [key], message: `${key} "${String(v)}" is not a valid identifier` } };
  }
  return { name: formatName(kind, project, args.location as string, args[idKey] as string) };
}
