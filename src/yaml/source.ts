// A parsed YAML document that remembers where every value came from, so diagnostics can point
// at file:line:column.
import type { CST, Document, LineCounter, Node, Pair, YAMLMap } from "yaml";
import { yaml } from "./yaml-lib.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { parseSimpleYaml } from "./fast-yaml.js";
import { SimpleOutline } from "./simple-outline.js";
import { firstAliasError, firstTooDeep, tooDeepError, type StructureError } from "./yaml-limits.js";
import { MAX_DEPTH, TOO_DEEP, TOO_DEEP_DETAIL } from "./yaml-limits.js";
import { pathTooDeep } from "../diagnostics/nesting.js";
import { valueErrors } from "./yaml-values.js";
import { columnAt } from "../base/utf8.js";

export type PathSegment = string | number;
export type DocPath = readonly PathSegment[];

export interface Position {
  line: number;
  column: number;
}

interface Parsed {
  doc: Document;
  lineCounter: LineCounter;
  /** Problems with the document's structure (see yaml-limits.ts) and values (yaml-values.ts) */
  structure: StructureError[];
}

/** What parseDocument(text, options) gives, from the parser's tokens. */
function composeDocument(
  tokens: readonly CST.Token[],
  text: string,
  options: { lineCounter: LineCounter; uniqueKeys: boolean; prettyErrors: false },
): Document {
  const { Composer, YAMLParseError } = yaml();
  let doc: Document | undefined;
  for (const next of new Composer(options).compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(
        new YAMLParseError(
          [next.range[0], next.range[1]],
          "MULTIPLE_DOCS",
          "Source contains multiple documents; please use YAML.parseAllDocuments()",
        ),
      );
      break;
    }
  }
  return doc!;
}

export class SourceDocument {
  private parsed: Parsed | undefined;
  /** The document's value when the fast path read it (the yaml document is then parsed lazily). */
  private readonly simple: Record<string, unknown> | undefined;

  /** `fast: false` parses with yaml at once (the text of one entry, for positions: see entryPosition). */
  constructor(
    readonly file: string,
    readonly text: string,
    opts: { fast?: boolean } = {},
  ) {
    this.simple = opts.fast === false ? undefined : parseSimpleYaml(text);
    if (!this.simple) this.parse();
  }

  /** Whether yaml's document of the whole text has been made (for tests). */
  get parsedWhole(): boolean {
    return this.parsed !== undefined;
  }

  /** The yaml document (with positions); parsed on first use when the fast path read the text. */
  get doc(): Document {
    return this.parse().doc;
  }

  get lineCounter(): LineCounter {
    return this.parse().lineCounter;
  }

  /** yaml's errors for the text (none when the fast path could read it). */
  get errors(): Document["errors"] {
    return this.simple ? [] : this.doc.errors;
  }

  /** Nesting deeper than the limit and bad aliases (none when the fast path could read the text). */
  get structureErrors(): readonly StructureError[] {
    return this.simple ? [] : this.parse().structure;
  }

  /** The document as JavaScript values (a new value each time). Only for a document without
   *  errors or structure errors: yaml-limits.ts has bounded what its aliases expand to, so yaml's
   *  own alias count, which fails without a position, is off. */
  toJS(): unknown {
    if (this.simple && !this.simpleTaken) {
      this.simpleTaken = true;
      return this.simple;
    }
    return this.doc.toJS({ maxAliasCount: -1 });
  }

  private simpleTaken = false;

  /** Whether `doc` is the value the fast path read from this text (toJS) and the text holds no
   *  "${" and no "fn::": then nothing in it is an interpolation or a function call (the fast path's
   *  strings are pieces of one line of the text, without escapes). */
  literalDocument(doc: unknown): boolean {
    return doc !== undefined && doc === this.simple && !this.text.includes("${") && !this.text.includes("fn::");
  }

  private parse(): Parsed {
    if (this.parsed) return this.parsed;
    const { Document, LineCounter, Parser, parseDocument } = yaml();
    let lineCounter = new LineCounter();
    const tokens = [...new Parser(lineCounter.addNewLine).parse(this.text)];
    // Too deep: not composed at all (yaml's composer recurses once per level).
    const deep = firstTooDeep(tokens);
    if (deep !== undefined) {
      this.parsed = { doc: new Document(null), lineCounter, structure: [tooDeepError(deep)] };
      return this.parsed;
    }
    // yaml's own duplicate-key check compares each key with every earlier key of its map, which is
    // quadratic: seconds for a stack with 10,000 resources. Parse without it, look for duplicates
    // in linear time, and only when there is one parse again with the check, so the errors (and
    // their order) are exactly yaml's.
    let doc = composeDocument(tokens, this.text, { lineCounter, uniqueKeys: false, prettyErrors: false });
    if (hasDuplicateKey(doc)) {
      lineCounter = new LineCounter();
      doc = parseDocument(this.text, { lineCounter, uniqueKeys: true, prettyErrors: false });
    }
    const bad = firstAliasError(doc);
    this.parsed = { doc, lineCounter, structure: [...(bad ? [bad] : []), ...valueErrors(doc, tokens, this.text)] };
    return this.parsed;
  }

  /** The line and column of `offset` (the column in characters: see columnAt). */
  positionAt(offset: number): Position {
    const lc = this.lineCounter;
    const { line } = lc.linePos(offset);
    return { line, column: columnAt(this.text, lc.lineStarts[line - 1] ?? 0, offset) };
  }

  private toPos(offset: number): Position {
    return this.positionAt(offset);
  }

  /** The node at `path`, or its nearest existing ancestor. */
  private nearest(path: DocPath): { node: Node | undefined; depth: number } {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = depth === 0 ? ((this.doc.contents as Node | null) ?? undefined) : this.nodeAt(path, depth);
      if (node && (node as Node).range) return { node, depth };
    }
    return { node: undefined, depth: 0 };
  }

  /** What yaml's `doc.getIn(path.slice(0, depth), true)` finds, with each map's pairs looked up
   *  by key (pairOf) instead of scanned: a position for each of N resources would otherwise visit
   *  N²/2 pairs of the resources map (minutes at 100,000). */
  private nodeAt(path: DocPath, depth: number): Node | undefined {
    const { isCollection, isMap } = yaml();
    let node: unknown = this.doc.contents;
    for (let i = 0; i < depth; i++) {
      if (!isCollection(node)) return undefined;
      node = isMap(node) ? (this.pairOf(node, path[i]!)?.value ?? undefined) : node.get(path[i], true);
    }
    return node as Node | undefined;
  }

  /** Each map's pairs by key, made on the map's first lookup (the document is never changed). */
  private readonly pairs = new WeakMap<YAMLMap, Map<unknown, Pair>>();

  /** The pair yaml's YAMLMap.get(key) finds: the first whose key is `key` or a scalar of that value. */
  private pairOf(map: YAMLMap, key: PathSegment): Pair | undefined {
    let byKey = this.pairs.get(map);
    if (!byKey) {
      const { isPair, isScalar } = yaml();
      byKey = new Map();
      for (const item of map.items) {
        if (!isPair(item)) continue;
        const k = isScalar(item.key) ? item.key.value : item.key;
        if (!byKey.has(k)) byKey.set(k, item);
      }
      this.pairs.set(map, byKey);
    }
    return byKey.get(key);
  }

  /** For entryPosition: the fast path's outline, the entries parsed last, line starts. */
  private outline: SimpleOutline | undefined;
  private readonly entries = new Map<number, SourceDocument>();
  private lineStarts: Int32Array | undefined;

  /**
   * Where the value at `path` is, for a text the fast path read, from yaml's parse of the
   * block-mapping entry it is in (a resource, say) instead of the whole text: the same answer, as
   * the entry is the same text at the same columns, its lines counted from the entry's first.
   * Undefined when it cannot tell; the caller then parses the whole text (one typo in a stack of
   * 100,000 resources cost a 15-second parse of all of it).
   */
  private entryPosition(path: DocPath, opts: { key?: boolean; offset?: number }): Position | undefined {
    if (!this.simple) return undefined;
    const entry = (this.outline ??= new SimpleOutline(this.text)).entry(path);
    if (!entry || entry.end - entry.start > ENTRY_CHARS) return undefined;
    const p = this.entryDocument(entry.start, entry.end).position(path.slice(entry.depth - 1), opts);
    return { line: p.line + this.lineOf(entry.start) - 1, column: p.column };
  }

  /** yaml's document of the entry at [start, end): kept for the next positions in it (a
   *  resource's diagnostics come together), the last ENTRIES_KEPT only (a warning in each of
   *  100,000 resources would otherwise keep 100,000 documents). */
  private entryDocument(start: number, end: number): SourceDocument {
    let sub = this.entries.get(start);
    if (sub) return sub;
    sub = new SourceDocument(this.file, this.text.slice(start, end), { fast: false });
    if (this.entries.size >= ENTRIES_KEPT) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(start, sub);
    return sub;
  }

  /** The line (from 1) of `offset`. */
  private lineOf(offset: number): number {
    const starts = (this.lineStarts ??= lineStartsOf(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /**
   * Where the value at `path` starts. `key: true` points at the map key instead (used for
   * unknown properties). `offset` is a character offset inside a scalar string (used to point
   * into an interpolation); it is applied only to plain and quoted one-line scalars.
   */
  position(path: DocPath, opts: { key?: boolean; offset?: number } = {}): Position {
    const quick = this.parsed ? undefined : this.entryPosition(path, opts);
    if (quick) return quick;
    const { isMap, isScalar } = yaml();
    if (opts.key && path.length > 0) {
      const parent = this.nodeAt(path, path.length - 1);
      if (parent && isMap(parent)) {
        // A composed document's keys are all nodes: the first pair of that key has a scalar key.
        const pair = this.pairOf(parent, path[path.length - 1]!);
        const keyNode = pair && isScalar(pair.key) ? (pair.key as Node) : undefined;
        if (keyNode?.range) return this.toPos(keyNode.range[0]);
      }
    }
    const { node, depth } = this.nearest(path);
    if (!node?.range) return { line: 1, column: 1 };
    let start = node.range[0];
    if (depth === path.length && opts.offset !== undefined && isScalar(node)) {
      // Never past the scalar's end.
      const end = node.range[1];
      if (node.type === "PLAIN") start += Math.min(opts.offset, end - start);
      else if (node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE")
        start += 1 + rawOffset(this.text, start + 1, end, opts.offset, node.type === "QUOTE_DOUBLE");
    }
    return this.toPos(start);
  }
}

/** Entries whose yaml documents are kept for more positions in them. */
const ENTRIES_KEPT = 64;
/** Entries longer than this are not parsed alone (the whole text is then parsed once). */
const ENTRY_CHARS = 64 * 1024;

/** Where each line of `text` starts. */
function lineStartsOf(text: string): Int32Array {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  const starts = new Int32Array(n);
  for (let i = text.indexOf("\n"), k = 1; i >= 0; i = text.indexOf("\n", i + 1)) starts[k++] = i + 1;
  return starts;
}

/**
 * Whether some map has two keys yaml's uniqueKeys check would call equal (scalars with the same
 * value). May say yes when yaml would not (NaN keys), never the other way round.
 */
function hasDuplicateKey(doc: Document): boolean {
  const { isScalar, visit } = yaml();
  let found = false;
  visit(doc, {
    Map(_, map) {
      if (map.items.length < 2) return undefined;
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) {
          found = true;
          return visit.BREAK;
        }
        seen.add(pair.key.value);
      }
      return undefined;
    },
  });
  return found;
}

/** Maps an offset in a quoted scalar's value to an offset in its source (escapes take more room). */
function rawOffset(text: string, from: number, end: number, offset: number, double: boolean): number {
  let raw = 0;
  for (let parsed = 0; parsed < offset && from + raw < end; parsed++) {
    const c = text[from + raw];
    if (double && c === "\\") {
      const e = text[from + raw + 1];
      raw += e === "x" ? 4 : e === "u" ? 6 : e === "U" ? 10 : 2;
    } else if (!double && c === "'" && text[from + raw + 1] === "'") raw += 2;
    else raw += 1;
  }
  return raw;
}

export function formatPath(path: DocPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** An error at the first list or map of `doc` (the document of `src`) nested more than MAX_DEPTH
 *  levels: a program stack's document (a YAML one deeper than that is refused as it is parsed). */
export function nestingError(src: SourceDocument, doc: unknown): Diagnostic | undefined {
  // A document parsed from text was checked as it was parsed: not walked again (a tenth of a
  // second at 100,000 resources). A program's source has no text.
  if (src.text !== "") return undefined;
  const path = pathTooDeep(doc, MAX_DEPTH);
  return path && errorAt(src, path, TOO_DEEP, { detail: TOO_DEEP_DETAIL });
}

/** An error at `path` in `src`: file:line:column and the document path (see `position` for `key` and `offset`). */
export function errorAt(
  src: SourceDocument,
  path: DocPath,
  summary: string,
  extra: { detail?: string; key?: boolean; offset?: number; address?: string } = {},
): Diagnostic {
  const pos = src.position(path, { key: extra.key, offset: extra.offset });
  return error(summary, {
    file: src.file,
    line: pos.line,
    column: pos.column,
    path: formatPath(path),
    ...(extra.detail ? { detail: extra.detail } : {}),
    ...(extra.address ? { address: extra.address } : {}),
  });
}
