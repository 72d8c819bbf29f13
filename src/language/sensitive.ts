// Secrets: a value from a `secret: true` input or fn::secret is carried through evaluation wrapped
// in `Sensitive`, so that everything computed from it (an interpolated string, a function's
// result, a field read from it) is sensitive too. Where values leave evaluation (a resource's
// inputs, a variable, an output) they are unwrapped into the plain value and Terraform's
// sensitivity mask (`after_sensitive`: true where sensitive), and the secret strings are
// collected so that what is shown or saved can be scrubbed of them (./redact.ts).
import { containsWhere } from "../base/contains.js";

export class Sensitive {
  constructor(readonly value: unknown) {}
  /** Never serialised by accident with its value. */
  toJSON(): string {
    return "(sensitive value)";
  }
}

export const isSensitive = (v: unknown): v is Sensitive => v instanceof Sensitive;

/** `v` marked sensitive (once). */
export function sensitive(v: unknown): Sensitive {
  return isSensitive(v) ? v : new Sensitive(v);
}

/** Whether some part of `v` is sensitive. */
export function containsSensitive(v: unknown): boolean {
  return containsWhere(v, isSensitive);
}

/** The plain value: every Sensitive replaced by what it holds. */
export function plain(v: unknown): unknown {
  if (isSensitive(v)) return plain(v.value);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object" && Object.getPrototypeOf(v) !== null && Object.getPrototypeOf(v) !== Object.prototype)
    return v; // Unknown and others
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = Object.create(null); // any key, __proto__ too
    for (const [k, x] of Object.entries(v)) out[k] = plain(x);
    return out;
  }
  return v;
}

/** The strings a sensitive value holds (what must never be shown), found in `v`. */
export function secretStrings(v: unknown, out: Set<string> = new Set(), inside = false): Set<string> {
  if (isSensitive(v)) return secretStrings(v.value, out, true);
  if (typeof v === "string" && inside && v !== "") out.add(v);
  else if ((typeof v === "number" || typeof v === "boolean") && inside) out.add(String(v));
  else if (Array.isArray(v)) v.forEach((x) => secretStrings(x, out, inside));
  else if (v && typeof v === "object") Object.values(v).forEach((x) => secretStrings(x, out, inside));
  return out;
}

/** The fields of a map that hold a secret anywhere, each marked true (whole fields: a list is
 *  normalised, sorted, after it is resolved, so a mask of its elements would not line up). */
export function fieldMask(v: unknown): Record<string, true> | false {
  if (!v || typeof v !== "object" || Array.isArray(v)) return false;
  const out: Record<string, true> = {};
  for (const [k, x] of Object.entries(v)) if (containsSensitive(x)) out[k] = true;
  return Object.keys(out).length ? out : false;
}

/** `v` with the parts `mask` marks sensitive wrapped again (a resource's planned values). */
export function withMask(v: unknown, mask: unknown): unknown {
  if (mask === true) return sensitive(v);
  if (!mask || typeof mask !== "object") return v;
  if (Array.isArray(v) && Array.isArray(mask)) return v.map((x, i) => withMask(x, mask[i]));
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, x] of Object.entries(v))
      out[k] = Object.hasOwn(mask, k) ? withMask(x, (mask as Record<string, unknown>)[k]) : x;
    return out;
  }
  return v;
}
