// The list calls discovery makes: a collection's list in one location (restore plans, endpoints)
// and each service's projects.locations.list, every page followed through nextPageToken. Each page
// is one call of the transport, so it is paced, retried and bounded by the deadline as any read.
import { LIST_METHODS, LOCATION_LISTS, listPath, type ListMethod } from "../gcp/list-methods.js";
import { OBJECT_KINDS, type PolicyKind } from "../gcp/object-kinds.js";
import type { Transport } from "./transport.js";

/** The most pages one listing follows: a server that never stops paging is an error, not a hang. */
export const MAX_PAGES = 10_000;
/** The page size asked for (the server may answer fewer: only nextPageToken says more follow). */
export const LIST_PAGE_SIZE = 1000;

interface Page {
  items: { name: string }[];
  next: string | undefined;
}

/** What is wrong with a page of `list`'s answer, or undefined. */
function pageProblem(list: ListMethod, value: unknown): string | undefined {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v))
    return "the response is not a list page: expected an object";
  const items = v[list.field];
  if (items !== undefined && !Array.isArray(items))
    return `the response is not a list page: ${list.field} is not a list`;
  const bad = ((items as unknown[] | undefined) ?? []).some((i) => typeof (i as { name?: unknown })?.name !== "string");
  if (bad) return `the response is not a list page: an item of ${list.field} has no name`;
  const next = v.nextPageToken;
  if (next !== undefined && typeof next !== "string")
    return "the response is not a list page: nextPageToken is not a string";
  return undefined;
}

async function pageOf(
  transport: Transport,
  kind: PolicyKind,
  spec: { project: string; location?: string; token?: string; signal?: AbortSignal },
): Promise<Page> {
  const list = spec.location === undefined ? LOCATION_LISTS[kind] : LIST_METHODS[kind];
  const query = new URLSearchParams({ pageSize: String(LIST_PAGE_SIZE) });
  if (spec.token) query.set("pageToken", spec.token);
  const path = listPath(kind, spec.project, spec.location);
  const value = await transport.call<Record<string, unknown>>({
    method: "GET",
    service: OBJECT_KINDS[kind].service,
    // projects.locations.list is answered by the global host (Vertex AI's others are regional).
    location: spec.location ?? "global",
    project: spec.project,
    path: `${path}?${query}`,
    methodId: list.id,
    resource: path.replace(/^\/[^/]+\//, ""),
    operation: "list",
    idempotent: true,
    check: (v) => pageProblem(list, v),
    ...(spec.signal ? { signal: spec.signal, abandon: true } : {}),
  });
  const next = value.nextPageToken as string | undefined;
  return { items: (value[list.field] as { name: string }[] | undefined) ?? [], next: next || undefined };
}

/** Every item's name: of `kind`'s collection in `location`, or (no location) of the service's
 *  locations. Follows nextPageToken to the end. */
export async function listAll(
  transport: Transport,
  kind: PolicyKind,
  project: string,
  location: string | undefined,
  signal?: AbortSignal,
): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const spec = { project, ...(location !== undefined ? { location } : {}), ...(token ? { token } : {}) };
    const page = await pageOf(transport, kind, signal ? { ...spec, signal } : spec);
    for (const i of page.items) names.push(i.name);
    if (!page.next) return names;
    if (page.next === token) throw new Error(`${LIST_METHODS[kind].id}: the server answered the same page token twice`);
    token = page.next;
  }
  throw new Error(`${LIST_METHODS[kind].id}: more than ${MAX_PAGES} pages`);
}
