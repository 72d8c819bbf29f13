// The part of the list methods' filters (AIP-160) the emulator can answer honestly: comparisons of
// a name field with = or != joined by AND. restorePlans.list filters on `name` (the full name);
// endpoints.list on `endpoint` (the ID, the last segment of the name), as its discovery document
// describes. Anything else (OR, NOT, functions, `:`, other fields the world does not hold, such as
// labels or display names) is refused with INVALID_ARGUMENT, never ignored.
import { invalidArgument } from "./errors.js";
import type { ListRoute } from "./routes.js";

/** Whether an item (its name as answered and its ID) passes the filter. */
export type ListFilter = (item: { name: string; id: string }) => boolean;

const FIELDS: Record<ListRoute["of"], Record<string, "name" | "id">> = {
  restorePlan: { name: "name" },
  endpoint: { endpoint: "id" },
};

// field, operator, then a quoted string (with \" and \\) or a bare word.
const TERM = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(!=|=)\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_./@-]+))\s*/;

export function parseListFilter(route: ListRoute, raw: string): ListFilter {
  const text = raw.trim();
  if (text === "") return () => true;
  const refuse = (why: string): never => {
    throw invalidArgument(`Invalid filter "${raw}": ${why}`, "filter");
  };
  if (route.location === undefined) refuse("the emulator does not filter locations.");
  const fields = FIELDS[route.of];
  const terms: ListFilter[] = [];
  let rest = text;
  for (;;) {
    const m = TERM.exec(rest);
    if (!m)
      return refuse(
        `the emulator understands only ${Object.keys(fields)
          .map((f) => `${f} = "…" or ${f} != "…"`)
          .join(", ")}, joined by AND.`,
      );
    const [all, field, op, quoted, bare] = m as unknown as [
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    const which = Object.hasOwn(fields, field) ? fields[field]! : refuse(`unknown or unsupported field "${field}".`);
    const value = quoted !== undefined ? quoted.replace(/\\(.)/g, "$1") : bare!;
    terms.push(op === "=" ? (i) => i[which] === value : (i) => i[which] !== value);
    rest = rest.slice(all.length);
    if (rest === "") break;
    const and = /^AND\s+/.exec(rest);
    if (!and) return refuse("terms are joined by AND only.");
    rest = rest.slice(and[0].length);
  }
  return (i) => terms.every((t) => t(i));
}
