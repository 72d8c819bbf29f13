// Whether a value is a plain object: made by a literal, JSON.parse or Object.create(null), not an
// array or an instance of a class.
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
