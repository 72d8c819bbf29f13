// A walk over a value and its parts, for the marks a value may carry inside (unknown, sensitive).
/** Whether `test` holds for a value or any part of it (elements, map values). */
export function containsWhere(v: unknown, test: (x: unknown) => boolean): boolean {
  if (test(v)) return true;
  if (Array.isArray(v)) return v.some((x) => containsWhere(x, test));
  if (v && typeof v === "object") return Object.values(v).some((x) => containsWhere(x, test));
  return false;
}
