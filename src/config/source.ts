// A parsed YAML document that remembers where every value came from, so diagnostics can point
// at file:line:column.
import { splitAddress } from "./addresses.js";
import type { CST, Document, LineCounter, Node } from "yaml";
import { yaml } from "./yaml-lib.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { parseSimpleYaml } from "./fast-yaml.js";
import { firstAliasError, firstTooDeep, tooDeepError, type StructureError } from "./yaml-limits.js";

export type PathSegment = string | number;
export type DocPath = readonly PathSegment[];

export interface Position {
  line: number;
  column: number;
}

interface Parsed {
  doc: Document;
  lineCounter: LineCounter;
  /** Problems with the document's structure (see yaml-limits.ts) */
  structure: StructureError[];
}

/** What parseDocument(text, options) gives, from the parser's tokens. */
function composeDocument(tokens: readonly CST.Token[], text: string, options: { lineCounter: LineCounter; uniqueKeys: boolean; prettyErrors: false }): Document {
  const { Composer, YAMLParseError } = yaml();
  let doc: Document | undefined;
  for (const next of new Composer(options).compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(new YAMLParseError([next.range[0], next.range[1]], "MULTIPLE_DOCS", "Source contains multiple documents; please use YAML.parseAllDocuments()"));
      break;
    }
  }
  return doc!;
}

export class SourceDocument {
  private parsed: Parsed | undefined;
  /** The document's value when the fast path read it (the yaml document is then parsed lazily). */
  private readonly simple: Record<string, unknown> | undefined;

  constructor(
    readonly file: string,
    readonly text: string,
  ) {
    this.simple = parseSimpleYaml(text);
    if (!this.simple) this.parse();
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
    this.parsed = { doc, lineCounter, structure: bad ? [bad] : [] };
    return this.parsed;
  }

  private toPos(offset: number): Position {
    const { line, col } = this.lineCounter.linePos(offset);
    return { line, column: col };
  }

  /** The node at `path`, or its nearest existing ancestor. */
  private nearest(path: DocPath): { node: Node | undefined; depth: number } {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = depth === 0 ? (this.doc.contents as Node | null) ?? undefined : (this.doc.getIn(path.slice(0, depth), true) as Node | undefined);
      if (node && (node as Node).range) return { node, depth };
    }
    return { node: undefined, depth: 0 };
  }

  /**
   * Where the value at `path` starts. `key: true` points at the map key instead (used for
   * unknown properties). `offset` is a character offset inside a scalar string (used to point
   * into an interpolation); it is applied only to plain and quoted one-line scalars.
   */
  position(path: DocPath, opts: { key?: boolean; offset?: number } = {}): Position {
    const { isMap, isScalar } = yaml();
    if (opts.key && path.length > 0) {
      const parent = this.doc.getIn(path.slice(0, -1), true) as Node | undefined;
      if (parent && isMap(parent)) {
        const last = path[path.length - 1];
        const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
        const keyNode = pair?.key as Node | undefined;
        if (keyNode?.range) return this.toPos(keyNode.range[0]);
      }
    }
    const { node, depth } = this.nearest(path);
    if (!node?.range) return { line: 1, column: 1 };
    let start = node.range[0];
    if (depth === path.length && opts.offset !== undefined && isScalar(node)) {
      if (node.type === "PLAIN") start += opts.offset;
      else if (node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE") start += 1 + rawOffset(this.text, start + 1, opts.offset, node.type === "QUOTE_DOUBLE");
    }
    return this.toPos(start);
  }
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
function rawOffset(text: string, from: number, offset: number, double: boolean): number {
  let raw = 0;
  for (let parsed = 0; parsed < offset && from + raw < text.length; parsed++) {
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

/** An error at `path` in `src`: file:line:column and the document path (see `position` for `key` and `offset`). */
/** Where a resource is declared, for a message that names another place: "stack.yaml:12:3". */
export function declaredAt(src: SourceDocument, resource: string): string {
  const pos = src.position(["resources", splitAddress(resource).name], { key: true });
  return `${src.file}:${pos.line}:${pos.column}`;
}

export function errorAt(src: SourceDocument, path: DocPath, summary: string, extra: { detail?: string; key?: boolean; offset?: number; address?: string } = {}): Diagnostic {
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
