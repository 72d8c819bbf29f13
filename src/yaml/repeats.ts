// The fast YAML path (./fast-yaml.ts) reads the same short texts again and again: the keys `type:`,
// `properties:`, `name:` and `role:` of every resource, a type, a role or an object's name on many
// resources in turn. A text read before is given back as what it was read as then, found by
// comparing characters in place: no new string, no new check of its spelling, and one string for
// every occurrence (a later look-up of it by a Map or as a property name hashes it once).
// Only scalars are kept (strings, booleans, null): a collection is never shared.

/** Slots of the table: one text per slot, the last one read there. */
const SLOTS = 1024;
/** Longer texts are not kept (rarely repeated, and costly to compare). */
const LONGEST = 96;

/** The texts met in one document, each with what it was read as. */
export class Repeats<T> {
  private readonly texts: (string | undefined)[] = new Array<string | undefined>(SLOTS);
  private readonly values: T[] = new Array<T>(SLOTS);

  /**
   * What text[s, e) reads as: `read(text.slice(s, e), depth)`, or what it gave for the same text
   * before. `read` must depend on nothing else than its arguments (it may throw: nothing is kept).
   */
  read(text: string, s: number, e: number, read: (raw: string, depth: number) => T, depth: number): T {
    const len = e - s;
    const slot = ((len * 31 + text.charCodeAt(s) * 7 + text.charCodeAt(e - 1)) & (SLOTS - 1)) >>> 0;
    const kept = this.texts[slot];
    if (kept !== undefined && kept.length === len && text.startsWith(kept, s)) return this.values[slot]!;
    const raw = text.slice(s, e);
    const value = read(raw, depth);
    if (len > 0 && len <= LONGEST && (value === null || typeof value !== "object")) {
      this.texts[slot] = raw;
      this.values[slot] = value;
    }
    return value;
  }
}
