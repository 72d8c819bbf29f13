// Values YAML can write but a stack cannot hold, each an error at its position (checked on yaml's
// path only: the fast path, fast-yaml.ts, reads no numbers).
//
// Numbers must be finite: 1e400 overflows to Infinity and .inf / .nan are not numbers JSON, the
// state or the cloud APIs can hold, so a plan would show them as a change after every apply.
import type { Document } from "yaml";
import { yaml } from "./yaml-lib.js";
import type { StructureError } from "./yaml-limits.js";

const NOT_FINITE_DETAIL = "Numbers must be finite: JSON, the state and the cloud APIs have no Infinity or NaN. Quote the value to make it a string.";

/** What is wrong with a number that is not finite, written as `text`: an overflow (1e400) or a
 *  spelling of infinity or NaN (.inf, .nan). */
export function nonFiniteSummary(text: string): string {
  return /inf|nan/i.test(text) ? "not a finite number" : "number out of range";
}

/** The values of `doc` that are numbers but not finite (an anchor's value once, not once per alias). */
export function valueErrors(doc: Document, text: string): StructureError[] {
  const { visit } = yaml();
  const out: StructureError[] = [];
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value !== "number" || Number.isFinite(node.value) || !node.range) return;
      const [from, to] = node.range;
      out.push({ offset: from, summary: nonFiniteSummary(text.slice(from, to)), detail: NOT_FINITE_DETAIL });
    },
  });
  return out;
}
