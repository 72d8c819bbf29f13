// The list methods: projects.locations.restorePlans.list (gkebackup v1),
// projects.locations.endpoints.list (aiplatform v1beta1) and each service's
// projects.locations.list, with Google's paging (AIP-158: pageSize, pageToken, nextPageToken; a
// token is opaque, bound to the request that made it, and refused with INVALID_ARGUMENT otherwise)
// and the part of each method's filter (AIP-160) and orderBy the emulator can honour; the rest is
// refused with INVALID_ARGUMENT, never ignored.
//
// The world knows an object's name and policy only, so an item carries its name (and a location
// its name and locationId). A project is known when the seed declares it or it has objects;
// another one gets the 403 Google sends for a project that does not exist or that the caller may
// not see. Every location of a known project can be listed (empty where it has no objects); a
// project's locations are those where it has objects.
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { OBJECT_KINDS } from "../gcp/object-kinds.js";
import { headerValue } from "./api.js";
import { authorize } from "./auth.js";
import { ok, type EmulatorContext, type Reply } from "./context.js";
import { ApiError, invalidArgument } from "./errors.js";
import { checkQuery, parseBody, parseMessage } from "./proto-json.js";
import { parseListFilter, type ListFilter } from "./list-filter.js";
import type { ListRoute } from "./routes.js";

/** A query parameter by its lowerCamel or its proto (snake_case) name. */
function param(query: URLSearchParams | undefined, camel: string): string | undefined {
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return query?.get(camel) ?? query?.get(snake) ?? undefined;
}

function pageSizeOf(ctx: EmulatorContext, query: URLSearchParams | undefined): number {
  const raw = param(query, "pageSize");
  if (raw === undefined || raw === "") return ctx.paging.defaultSize;
  const n = parseMessage({ pageSize: raw }, { pageSize: { type: { t: "int32" } } }, "").pageSize as number;
  if (n < 0) throw invalidArgument(`page_size must not be negative, got ${n}.`, "page_size");
  return n === 0 ? ctx.paging.defaultSize : Math.min(n, ctx.paging.maxSize);
}

/** What a page token is bound to: the parent and every parameter but the page size. */
function requestKey(route: ListRoute, query: URLSearchParams | undefined): string {
  const parts = [
    route.method,
    route.parent,
    param(query, "filter") ?? "",
    param(query, "orderBy") ?? "",
    param(query, "readMask") ?? "",
  ];
  return createHash("sha256").update(parts.join("\u0000")).digest("base64url").slice(0, 16);
}

function pageToken(after: string, key: string): string {
  return Buffer.from(JSON.stringify({ a: after, k: key })).toString("base64url");
}

/** The name the page starts after; undefined for the first page. */
function startAfter(query: URLSearchParams | undefined, key: string): string | undefined {
  const token = param(query, "pageToken");
  if (token === undefined || token === "") return undefined;
  const bad = (): never => {
    throw invalidArgument(
      "The page token is invalid: use the nextPageToken of the previous call, with the same parameters.",
      "page_token",
    );
  };
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    return bad();
  }
  const t = decoded as { a?: unknown; k?: unknown } | null;
  if (!t || typeof t.a !== "string" || t.k !== key) return bad();
  return t.a;
}

/** Google's answer for a parent in a project that does not exist or that the caller may not see. */
function parentDenied(route: ListRoute): ApiError {
  const resource = `//${OBJECT_KINDS[route.of].service}.googleapis.com/${route.parent}`;
  const { permission } = route.list;
  return new ApiError(
    "PERMISSION_DENIED",
    `Permission '${permission}' denied on resource '${resource}' (or it may not exist).`,
    {
      reason: "IAM_PERMISSION_DENIED",
      metadata: { permission, resource: route.parent },
    },
  );
}

/** The order of the items: orderBy "name" (or "name asc", "name desc"); none means by name. */
function descending(route: ListRoute, query: URLSearchParams | undefined): boolean {
  const raw = (param(query, "orderBy") ?? "").trim();
  if (raw === "" || !route.list.parameters.includes("orderBy")) return false;
  const m = /^name(?:\s+(asc|desc))?$/i.exec(raw);
  if (!m)
    throw invalidArgument(
      `Invalid order_by "${raw}": the emulator sorts by name only ("name", "name asc" or "name desc").`,
      "order_by",
    );
  return m[1]?.toLowerCase() === "desc";
}

/** A readMask (endpoints.list): which fields of each item to answer; undefined for all. */
function readMask(query: URLSearchParams | undefined): Set<string> | undefined {
  const raw = param(query, "readMask");
  if (raw === undefined || raw === "") return undefined;
  const paths = raw.split(",").map((p) => p.trim());
  const bad = paths.find((p) => !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(p));
  if (bad !== undefined) throw invalidArgument(`Invalid read_mask path "${bad}".`, "read_mask");
  return new Set(paths);
}

interface Item {
  name: string;
  json: Record<string, string>;
}

function itemsOf(ctx: EmulatorContext, route: ListRoute, project: string, filter: ListFilter): Item[] {
  if (route.location === undefined) {
    return ctx.store.locationsOf(project).map((l) => ({
      name: `${route.parent}/locations/${l}`,
      json: { name: `${route.parent}/locations/${l}`, locationId: l },
    }));
  }
  const out: Item[] = [];
  for (const o of ctx.store.listIn(route.of, project, route.location)) {
    // Answered in the spelling of the request's parent (a project number stays a number).
    const name = `${route.parent}/${OBJECT_KINDS[route.of].collection}/${o.name.split("/")[5]!}`;
    if (filter({ name, id: o.name.split("/")[5]! })) out.push({ name, json: { name } });
  }
  return out;
}

export function handleList(
  ctx: EmulatorContext,
  route: ListRoute,
  query: URLSearchParams | undefined,
  headers: IncomingHttpHeaders,
  body: Buffer | undefined,
): Reply {
  const project = ctx.store.projectId(route.project);
  authorize(ctx.store.project(project), headerValue(headers.authorization), route.list.permission, route.parent, "any");
  checkQuery(
    query,
    route.list.parameters.flatMap((p) => [p, p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
  );
  // The method has no request body: any field in one is unknown.
  parseBody(body, {});
  const size = pageSizeOf(ctx, query);
  const filter = parseListFilter(route, param(query, "filter") ?? "");
  const desc = descending(route, query);
  const mask = readMask(query);
  const key = requestKey(route, query);
  const after = startAfter(query, key);
  if (!ctx.store.knows(project)) throw parentDenied(route);
  const items = itemsOf(ctx, route, project, filter);
  if (desc) items.reverse();
  const from = after === undefined ? 0 : items.findIndex((i) => (desc ? i.name < after : i.name > after));
  const page = from < 0 ? [] : items.slice(from, from + size);
  const more = from >= 0 && from + size < items.length;
  const answer: Record<string, unknown> = {};
  if (page.length > 0) answer[route.list.field] = page.map((i) => (mask && !mask.has("name") ? {} : i.json));
  if (more) answer.nextPageToken = pageToken(page[page.length - 1]!.name, key);
  return ok(JSON.stringify(answer));
}
