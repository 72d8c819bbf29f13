// JSON Schema (ajv) errors as one readable line: dotted paths, allowed values, unknown properties.
import type { ErrorObject } from "./index.js";

/** Schema errors as one line, with the allowed values or the unexpected property named. */
export function schemaProblem(errors: readonly ErrorObject[], prefix = ""): string {
  // ajv reports each failed branch; the first few say enough.
  return errors
    .slice(0, 3)
    .map((e) => {
      const rel = e.instancePath
        .replace(/^\//, "")
        .replace(/\/(\d+)/g, "[$1]")
        .replace(/\//g, ".")
        .replace(/\.\[/g, "[");
      const at =
        [prefix, rel]
          .filter((x) => x !== "")
          .join(".")
          .replace(/\.\[/g, "[") || "(top level)";
      const p = e.params as { allowedValues?: unknown[]; additionalProperty?: string };
      if (p.allowedValues) return `${at} must be one of ${p.allowedValues.map(String).join(", ")}`;
      if (p.additionalProperty) return `${at} has unknown property "${p.additionalProperty}"`;
      return `${at} ${e.message ?? "is invalid"}`;
    })
    .join("; ");
}
