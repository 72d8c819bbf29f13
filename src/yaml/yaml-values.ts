// Values YAML can write but a stack cannot hold, each an error at its position (checked on yaml's
// path only: the fast path, fast-yaml.ts, reads no numbers and no tags).
//
// Explicit tags: only the JSON-compatible core ones are accepted (!!str, !!int, !!float, !!bool,
// !!null, !!map, !!seq, also written verbatim as !<tag:yaml.org,2002:str>), and only on a value
// they fit. yaml reads any other tag as something else without an error: a custom tag as a plain
// string, !!binary as bytes, !!timestamp as a date, !!set and !!omap as maps that JSON makes
// empty; a core tag that does not fit (!!float 1) leaves a string.
// Numbers must be finite: 1e400 overflows to Infinity and .inf / .nan are not numbers JSON, the
// state or the cloud APIs can hold, so a plan would show them as a change after every apply.
// Merge keys (`<<: *anchor`, YAML 1.1, dropped by YAML 1.2, which yaml follows) are refused at the
// key: read as YAML 1.2 reads them, `<<` is an ordinary key and nothing is merged, so a stack would
// get schema errors about what is missing, or a variable a map with a "<<" key, silently. Merging
// them instead would give merged values the anchor's position, not the place that uses them.
import type { CST, Document } from "yaml";
import { yaml } from "./yaml-lib.js";
import type { StructureError } from "./yaml-limits.js";

const NOT_FINITE_DETAIL =
  "Numbers must be finite: JSON, the state and the cloud APIs have no " +
  "Infinity or NaN. Quote the value to make it a string.";

/** What is wrong with a number that is not finite, written as `text`: an overflow (1e400) or a
 *  spelling of infinity or NaN (.inf, .nan). */
function nonFiniteSummary(text: string): string {
  return /inf|nan/i.test(text) ? "not a finite number" : "number out of range";
}

const CORE_TAGS = new Set(["str", "int", "float", "bool", "null", "map", "seq"].map((t) => `tag:yaml.org,2002:${t}`));
const TAG_DETAIL =
  "A stack is JSON data: the only tags are !!str, !!int, !!float, !!bool, !!null, !!map and " +
  "!!seq. Remove the tag, or quote the value to make it a string.";
const MISFIT_DETAIL =
  "A tag must fit its value: !!str a scalar, !!int an integer, !!float a number with a point or an exponent " +
  "(1.0), !!bool true or false, !!null null, ~ or nothing, !!map a mapping, !!seq a list. Remove the tag, or " +
  "change the value.";

/** The tag tokens of `tokens`, in document order (found without recursion: the depth is unchecked here). */
function tagTokens(tokens: readonly CST.Token[]): CST.SourceToken[] {
  const tags: CST.SourceToken[] = [];
  const stack: unknown[] = [...tokens].reverse();
  while (stack.length) {
    const t = stack.pop();
    if (Array.isArray(t)) {
      for (let i = t.length - 1; i >= 0; i--) stack.push(t[i]);
      continue;
    }
    if (t === null || typeof t !== "object") continue;
    const tok = t as { type?: string } & Record<string, unknown>;
    if (tok.type === "tag") tags.push(tok as unknown as CST.SourceToken);
    // A document, a collection, an item of one, a block scalar's props, a flow scalar's end.
    for (const field of ["value", "end", "sep", "key", "items", "props", "start"])
      if (tok[field] !== undefined) stack.push(tok[field]);
  }
  return tags;
}

/** The explicit tags of `doc` (parsed from `tokens`) that are not core ones, or not on a value they fit. */
function tagErrors(doc: Document, tokens: readonly CST.Token[]): StructureError[] {
  const out: StructureError[] = [];
  /** The core tags, by offset */
  const core = new Map<number, string>();
  for (const tag of tagTokens(tokens)) {
    const name = doc.directives?.tagName(tag.source, () => {});
    if (name && CORE_TAGS.has(name)) core.set(tag.offset, tag.source);
    else out.push({ offset: tag.offset, summary: `unsupported YAML tag ${tag.source}`, detail: TAG_DETAIL });
  }
  // yaml warns (never errs) at the tag when a tag does not resolve for its value.
  for (const w of doc.warnings) {
    const source = core.get(w.pos[0]);
    if (w.code === "TAG_RESOLVE_FAILED" && source !== undefined)
      out.push({ offset: w.pos[0], summary: `YAML tag ${source} does not fit this value`, detail: MISFIT_DETAIL });
  }
  return out;
}

/** The tags and numbers of `doc` (parsed from `tokens` of `text`) a stack cannot hold. */
export function valueErrors(doc: Document, tokens: readonly CST.Token[], text: string): StructureError[] {
  return [...tagErrors(doc, tokens), ...nodeErrors(doc, text)].sort((a, b) => a.offset - b.offset);
}

const MERGE_DETAIL =
  "A stack is read as YAML 1.2, which has no merge keys: `<<` would be an ordinary key and nothing merged. " +
  "Write the keys out in full; for many resources alike, use forEach; for a value used in several places, a " +
  'variable and ${name}. Quote it ("<<") for a key named <<.';

/** The values of `doc` that are numbers but not finite (an anchor's value once, not once per
 *  alias), and its merge keys (a plain `<<` key: a quoted one is an ordinary key). */
function nodeErrors(doc: Document, text: string): StructureError[] {
  const { isScalar, visit } = yaml();
  const out: StructureError[] = [];
  visit(doc, {
    Pair(_, pair) {
      const k = pair.key;
      if (isScalar(k) && k.type === "PLAIN" && k.value === "<<" && k.range)
        out.push({ offset: k.range[0], summary: "YAML merge keys (<<) are not supported", detail: MERGE_DETAIL });
    },
    Scalar(_, node) {
      if (typeof node.value !== "number" || Number.isFinite(node.value) || !node.range) return;
      const [from, to] = node.range;
      out.push({ offset: from, summary: nonFiniteSummary(text.slice(from, to)), detail: NOT_FINITE_DETAIL });
    },
  });
  return out;
}
