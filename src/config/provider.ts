// The `provider:` section with its inputs resolved: `project: acme-${env}` takes the input's value
// when the stack loads, as `provider { project = var.project }` does in Terraform. A provider field
// may use inputs and variables known at load (not resources, not invokes), never a secret (the
// project and location are in every object's name, which plans and reviews show).
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { containsUnknown, UNKNOWN } from "../language/expressions.js";
import { resolveValue, type Scope } from "../language/resolve.js";
import { containsSensitive, plain } from "../language/sensitive.js";
import type { SourceDocument } from "../yaml/source.js";

/** The provider fields that may hold interpolations (endpoint is one of three forms: the schema's). */
const RESOLVED = ["project", "location", "seed"] as const;

export type ProviderFields = Partial<Record<(typeof RESOLVED)[number], string>>;

/**
 * The provider's fields with their interpolations resolved through `scope` (inputs and load-time
 * variables). A field that waits on an input without a value is left out, with no error of its
 * own: the missing input is the one error (`missing` is true then, so that names are not checked
 * against a project that is not known; so it is after a field's own error).
 */
export function resolveProvider(
  src: SourceDocument,
  raw: Record<string, unknown>,
  scope: Scope,
  diags: Diagnostic[],
): { fields: ProviderFields; missing: boolean } {
  const fields: ProviderFields = {};
  let missing = false;
  for (const key of RESOLVED) {
    const v = raw[key];
    if (typeof v !== "string") continue;
    const at = ["provider", key];
    const others = new Set<string>();
    const resolved = resolveValue(v, at, (root) => scope(root) ?? (others.add(root), { value: UNKNOWN }), src, diags);
    // Where the field is, found only for an error: finding it costs a walk of the whole text.
    const pos = () => ({ file: src.file, ...src.position(at), code: "stack/provider" });
    // A field not resolved leaves the names unchecked: its error (or the missing input's) is the one.
    if (others.size || containsSensitive(resolved) || containsUnknown(resolved)) missing = true;
    if (others.size) {
      const names = [...others].map((r) => `"${r}"`).join(", ");
      diags.push(
        error(`provider.${key} may use only inputs and variables known when the stack loads, not ${names}`, {
          ...pos(),
          detail: "The provider is known before anything is read or created: give the value as an input (config:).",
        }),
      );
    } else if (containsSensitive(resolved)) {
      diags.push(
        error(`provider.${key} cannot be computed from a secret`, {
          ...pos(),
          detail: "The project and location are part of every object's name, which plans and reviews show.",
        }),
      );
    } else if (containsUnknown(resolved)) {
      continue;
    } else if (typeof plain(resolved) !== "string" || plain(resolved) === "") {
      diags.push(error(`provider.${key} must be a non-empty string`, pos()));
    } else fields[key] = plain(resolved) as string;
  }
  return { fields, missing };
}
