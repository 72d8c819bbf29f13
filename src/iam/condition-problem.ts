// A problem found in a CEL condition (an IAM condition, a guardrail's rule), with its offset in the
// expression for the caller to position in its file.
import { suggest as suggestName } from "../diagnostics/did-you-mean.js";

export interface ConditionProblem {
  message: string;
  /** Offset in the expression (0-based). */
  offset: number;
  /** A malformed literal (timestamp, time zone…): Google accepts the expression, but it never grants access. */
  neverGrants?: true;
}

/** Converts `<input>:LINE:COL: message` (a parse error) into an offset in `text`. */
export function parseProblem(text: string, e: Error): ConditionProblem {
  const m = /<input>:(\d+):(\d+): (.*)$/s.exec(e.message);
  if (!m) return { message: `condition expression is not valid CEL: ${e.message}`, offset: 0 };
  const lines = text.split("\n");
  const before = lines.slice(0, Number(m[1]) - 1).reduce((n, l) => n + l.length + 1, 0);
  return {
    message: `condition expression is not valid CEL: ${m[3]}`,
    offset: Math.min(text.length, before + Number(m[2]) - 1),
  };
}

/** "; did you mean X?" for a name that is a likely typo of one of `options`, else "". */
export const suggest = (name: string, options: readonly string[], show: (s: string) => string = (s) => s): string => {
  const best = suggestName(name, options);
  return best === undefined ? "" : `; did you mean ${show(best)}?`;
};
