// Where an entry of a document the fast YAML path read (./fast-yaml.ts) is written, from its
// content lines alone: no yaml document is built for a diagnostic's position.
import { contentLines, keyEnd, type Lines } from "./fast-yaml.js";

/**
 * The block mappings of a document parseSimpleYaml read, as its content lines: where the entry a
 * path leads to is, without yaml's document (./source.ts finds a diagnostic's position in that
 * entry's text alone: one typo in a stack of 100,000 resources cost a 15-second parse of it all).
 */
export class SimpleOutline {
  private readonly lines: Lines;
  /** Per block mapping (by its first content line): each key's line. */
  private readonly maps = new Map<number, Map<string, number>>();
  /** Per key line (+1; 0: not found yet): the line after its value's last. Found once each, so a
   *  position in each of N resources does not scan the resources' lines N times. */
  private ends: Int32Array | undefined;

  constructor(private readonly text: string) {
    const lines = contentLines(text);
    if (!lines) throw new Error("SimpleOutline: not a document parseSimpleYaml reads");
    this.lines = lines;
  }

  /**
   * The deepest block-mapping entry along `path`, as the number of segments that lead to it (its
   * key is path[depth - 1]) and its text's offsets: from the start of its key's line to the end
   * of its value's last content line. Undefined when path[0] is not a key of the root mapping.
   */
  entry(path: readonly (string | number)[]): { depth: number; start: number; end: number } | undefined {
    const { count, indents, starts, ends, items } = this.lines;
    let from = 0;
    let to = count;
    let found: { depth: number; start: number; end: number } | undefined;
    for (let d = 0; d < path.length; d++) {
      const seg = path[d];
      if (typeof seg !== "string" || from >= to || items[from]) break;
      const j = this.keysOf(from, to).get(seg);
      if (j === undefined) break;
      const indent = indents[j]!;
      const e = this.valueEnd(j, to);
      found = { depth: d + 1, start: starts[j]! - indent, end: ends[e - 1]! };
      // Descend only into a block mapping.
      if (e === j + 1 || indents[j + 1] === indent) break;
      from = j + 1;
      to = e;
    }
    return found;
  }

  /** The line after the value of the key on line `j` (of a mapping whose lines end before `to`):
   *  the more indented lines after the key, and a sequence at the key's indent. */
  private valueEnd(j: number, to: number): number {
    const known = (this.ends ??= new Int32Array(this.lines.count))[j]!;
    if (known) return known - 1;
    const { indents, items } = this.lines;
    const indent = indents[j]!;
    let e = j + 1;
    while (e < to && (indents[e]! > indent || (indents[e] === indent && items[e]))) e++;
    this.ends[j] = e + 1;
    return e;
  }

  /** The keys of the block mapping whose lines are [from, to), each to its line. */
  private keysOf(from: number, to: number): Map<string, number> {
    let keys = this.maps.get(from);
    if (keys) return keys;
    const { indents, starts, ends, items } = this.lines;
    const indent = indents[from]!;
    keys = new Map();
    for (let j = from; j < to; j++) {
      if (indents[j] !== indent || items[j]) continue;
      const s = starts[j]!;
      const e = ends[j]!;
      keys.set(this.text.slice(s, keyEnd(this.text, s, e)), j);
    }
    this.maps.set(from, keys);
    return keys;
  }
}
