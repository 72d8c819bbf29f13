// Partial responses: the `fields` system parameter (https://cloud.google.com/apis/docs/system-parameters)
// selects parts of a successful answer, e.g. `fields=etag,bindings/role`. json-mask implements the
// same selector grammar (commas, `a/b`, `a(b,c)`, `*`), so it is used rather than a parser of our own.
import mask from "json-mask";
import type { Reply } from "./context.js";

/** The reply with only the selected fields when the request named some. */
export function partialResponse(reply: Reply, query: URLSearchParams | undefined): Reply {
  const fields = query?.get("fields");
  if (!fields || reply.status !== 200) return reply;
  const selected: unknown = mask(JSON.parse(reply.body), fields);
  return { ...reply, body: JSON.stringify(selected ?? {}) };
}
