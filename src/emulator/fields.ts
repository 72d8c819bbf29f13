// Partial responses: the `fields` system parameter (https://cloud.google.com/apis/docs/system-parameters)
// selects parts of a successful answer, e.g. `fields=etag,bindings/role`. json-mask implements the
// same selector grammar (commas, `a/b`, `a(b,c)`, `*`), so it is used rather than a parser of our own.
import mask from "json-mask";
import type { Reply } from "./context.js";
import { invalidArgument } from "./errors.js";

/** A field name in a selector, or `*`. */
const NAME = /^(?:[A-Za-z_][A-Za-z0-9_]*|\*)/;

/**
 * Refuses a `fields` value that is not a selector, before the method runs (Google's front end
 * answers 400 "Invalid field selection …" and calls nothing): selection = path ("," path)*;
 * path = name ("/" name)* ["(" selection ")"]. json-mask would take a malformed one its own way.
 */
export function checkFields(query: URLSearchParams | undefined): void {
  const fields = query?.get("fields");
  if (fields === null || fields === undefined) return;
  const end = selection(fields, 0, 0);
  if (end !== fields.length) throw invalidArgument(`Invalid field selection ${fields}`);
}

/** Selections nested deeper than any message is (a refusal, not a stack overflow). */
const MAX_NESTING = 32;

/** The index after a selection that starts at `at` (`depth` parentheses in), or -1. */
function selection(text: string, at: number, depth: number): number {
  if (depth > MAX_NESTING) return -1;
  let i = path(text, at, depth);
  while (i >= 0 && text[i] === ",") i = path(text, i + 1, depth);
  return i;
}

/** The index after a path that starts at `at`, or -1. */
function path(text: string, at: number, depth: number): number {
  let i = at;
  for (;;) {
    const name = NAME.exec(text.slice(i, i + 256));
    if (!name) return -1;
    i += name[0].length;
    if (text[i] !== "/") break;
    i++;
  }
  if (text[i] !== "(") return i;
  const inner = selection(text, i + 1, depth + 1);
  return inner >= 0 && text[inner] === ")" ? inner + 1 : -1;
}

/** The reply with only the selected fields when the request named some. */
export function partialResponse(reply: Reply, query: URLSearchParams | undefined): Reply {
  const fields = query?.get("fields");
  if (!fields || reply.status !== 200) return reply;
  const selected: unknown = mask(JSON.parse(reply.body), fields);
  return { ...reply, body: JSON.stringify(selected ?? {}) };
}
