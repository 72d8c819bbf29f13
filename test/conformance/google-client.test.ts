// Conformance: Google's own Node client (googleapis-common, the engine of the `googleapis`
// package, built here from the vendored discovery documents, offline) drives the real emulator
// over loopback. Every method the emulator serves is called for every status it can answer
// (its own refusals, and each canonical error code through fault injection), and every answer
// is checked: a success against the method's response schema, an error against google.rpc.Status.
// A drift of the emulator from Google's wire, or of the served methods from the documents, fails.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { Discovery, type EndpointCreator, type GoogleConfigurable } from "googleapis-common";
import { METHOD_IDS } from "../../src/emulator/index.js";
import { HTTP_STATUS } from "../../src/emulator/errors.js";
import { LIST_METHODS, LOCATION_LISTS } from "../../src/gcp/list-methods.js";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { useFileEmulator } from "../support/emulator.js";
import {
  DISCOVERY_DIR,
  DOCUMENTS,
  ERROR_ENVELOPE,
  methodsOf,
  readDocument,
  schemaValidator,
  type DiscoveryDocument,
  type DiscoveryMethod,
  type DocumentName,
} from "./discovery.js";

const OPEN = "open-project";
const LOCKED = "locked-project";
const name = (project: string, collection: string, id: string) =>
  `projects/${project}/locations/us-central1/${collection}/${id}`;
const COND = { title: "weekdays", expression: "request.time.getDayOfWeek() < 5" };
const AUDIT = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" as const }] }];
const conditional = (role: string) => ({
  version: 3 as const,
  bindings: [
    { role, members: ["user:carol@example.com"] },
    { role, members: ["group:sre@example.com"], condition: COND },
  ],
});

const COLLECTIONS = {
  restorePlans: "gkebackup_v1",
  endpoints: "aiplatform_v1beta1",
  federations: "metastore_v1alpha",
} as const;
type Collection = keyof typeof COLLECTIONS;

function world(): EmulatorWorld {
  return {
    projects: {
      [OPEN]: { number: "111111111111" },
      [LOCKED]: {
        number: "222222222222",
        callers: { "admin-token": "user:admin@example.com", "viewer-token": "user:eve@example.com" },
        iamAdmins: ["user:admin@example.com"],
      },
    },
    restorePlans: [
      {
        name: name(OPEN, "restorePlans", "a"),
        policy: { ...conditional("roles/gkebackup.viewer"), auditConfigs: AUDIT },
      },
      { name: name(LOCKED, "restorePlans", "a") },
      { name: name(OPEN, "restorePlans", "b") },
      { name: `projects/${OPEN}/locations/europe-west1/restorePlans/c` },
    ],
    endpoints: [
      { name: name(OPEN, "endpoints", "a"), policy: conditional("roles/aiplatform.user") },
      { name: name(LOCKED, "endpoints", "a") },
      { name: name(OPEN, "endpoints", "b") },
      { name: `projects/${OPEN}/locations/europe-west1/endpoints/c` },
    ],
    federations: [
      { name: name(OPEN, "federations", "a"), labels: { owner: "data" }, policy: conditional("roles/metastore.user") },
      { name: name(LOCKED, "federations", "a") },
    ],
  };
}

const emu = useFileEmulator({ seed: world() });
const docs = Object.fromEntries(DOCUMENTS.map((d) => [d, readDocument(d)])) as Record<DocumentName, DiscoveryDocument>;
const methods = new Map<string, { doc: DiscoveryDocument; method: DiscoveryMethod }>(
  DOCUMENTS.flatMap((d) => methodsOf(docs[d]).map((m) => [m.id, { doc: docs[d], method: m }] as const)),
);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Api = any;
const creators = new Map<DocumentName, EndpointCreator>();
/** The discovered API of `doc`, sending `headers`; no retries (each answer is checked). */
async function client(doc: DocumentName, headers: Record<string, string>): Promise<Api> {
  let create = creators.get(doc);
  if (!create) {
    create = await new Discovery({ debug: false, includePrivate: false }).discoverAPI(`${DISCOVERY_DIR}/${doc}.json`);
    creators.set(doc, create);
  }
  return create({ rootUrl: `${emu.url}/`, retry: false, headers }, { _options: {} } as unknown as GoogleConfigurable);
}

interface Answer {
  status: number;
  data: unknown;
}

/** What each method was answered, by method ID and HTTP status: the suite's coverage. */
const seen = new Map<string, Set<number>>();

/** Calls `methodId` through Google's client, checks the answer against the documents, returns it. */
async function callMethod(
  methodId: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const entry = methods.get(methodId);
  if (!entry) throw new Error(`${methodId} is in no vendored discovery document`);
  const [, ...path] = methodId.split(".");
  let fn: Api = await client(`${entry.doc.name}_${entry.doc.version}` as DocumentName, headers);
  for (const p of path) fn = fn[p];
  let answer: Answer;
  try {
    const r = await fn(params);
    answer = { status: r.status, data: r.data };
  } catch (e) {
    const r = (e as { response?: { status: number; data: unknown } }).response;
    if (!r) throw e;
    answer = { status: r.status, data: r.data };
  }
  if (answer.status === 200) {
    const validate = schemaValidator(entry.doc, entry.method.response!.$ref);
    expect(validate(answer.data), `${methodId} 200 ${JSON.stringify(validate.errors)}`).toBe(true);
  } else {
    expect(ERROR_ENVELOPE(answer.data), `${methodId} ${answer.status} ${JSON.stringify(answer.data)}`).toBe(true);
    expect((answer.data as { error: { code: number } }).error.code).toBe(answer.status);
  }
  const s = seen.get(methodId) ?? new Set<number>();
  s.add(answer.status);
  seen.set(methodId, s);
  return answer;
}

const ADMIN = { Authorization: "Bearer admin-token" };
const VIEWER = { Authorization: "Bearer viewer-token" };
const FOREIGN = { Origin: "https://evil.example" };

const id = (collection: Collection, verb: string): string => {
  const doc = docs[COLLECTIONS[collection]];
  return `${doc.name}.projects.locations.${collection}.${verb}`;
};
const PERMISSION = {
  restorePlans: "gkebackup.restorePlans",
  endpoints: "aiplatform.endpoints",
  federations: "metastore.federations",
};

/** The parameters of a valid call of each method on `resource`. */
function validParams(collection: Collection, verb: string, resource: string, etag?: string): Record<string, unknown> {
  switch (verb) {
    case "get":
      return { name: resource };
    case "getIamPolicy":
      return { resource, "options.requestedPolicyVersion": 3 };
    case "setIamPolicy": {
      const policy = { version: 3, bindings: [{ role: "roles/viewer", members: ["user:ann@example.com"] }], etag };
      return { resource, requestBody: { policy } };
    }
    default: {
      const permissions = [`${PERMISSION[collection]}.getIamPolicy`, `${PERMISSION[collection]}.setIamPolicy`];
      return collection === "endpoints" ? { resource, permissions } : { resource, requestBody: { permissions } };
    }
  }
}

/** Parameters Google refuses with 400 for each verb. */
function invalidParams(collection: Collection, verb: string, resource: string): Record<string, unknown> | undefined {
  switch (verb) {
    case "getIamPolicy":
      return { resource, "options.requestedPolicyVersion": 2 };
    case "setIamPolicy":
      return { resource, requestBody: { policy: { bindings: [{ role: "roles/viewer", members: ["alice"] }] } } };
    case "testIamPermissions":
      return collection === "endpoints"
        ? { resource, permissions: ["aiplatform.*"] }
        : { resource, requestBody: { permissions: ["*"] } };
    default:
      return undefined;
  }
}

const VERBS: Record<Collection, readonly string[]> = {
  restorePlans: ["getIamPolicy", "setIamPolicy", "testIamPermissions"],
  endpoints: ["getIamPolicy", "setIamPolicy", "testIamPermissions"],
  federations: ["get", "getIamPolicy", "setIamPolicy", "testIamPermissions"],
};
const PROJECTS_GET = "cloudresourcemanager.projects.get";

beforeEach(async () => {
  await fetch(`${emu.url}/__emulator/reset`, { method: "POST" });
});

describe("the served methods are the vendored documents' methods", () => {
  it("serves every vendored method and nothing else", () => {
    expect([...METHOD_IDS].sort()).toEqual([...methods.keys()].sort());
  });
});

describe.each(Object.keys(COLLECTIONS) as Collection[])("%s through Google's Node client", (collection) => {
  const open = name(OPEN, collection, "a");
  const locked = name(LOCKED, collection, "a");
  const missing = name(OPEN, collection, "gone");

  it.each(VERBS[collection])("%s: 200, 400, 401, 403, 404 as Google answers them", async (verb) => {
    const m = id(collection, verb);
    expect((await callMethod(m, validParams(collection, verb, open))).status).toBe(200);
    const invalid = invalidParams(collection, verb, open);
    if (invalid) expect((await callMethod(m, invalid)).status).toBe(400);
    expect((await callMethod(m, validParams(collection, verb, locked))).status).toBe(401);
    const denied = verb === "setIamPolicy" ? VIEWER : FOREIGN;
    expect((await callMethod(m, validParams(collection, verb, locked), denied)).status).toBe(403);
    expect((await callMethod(m, validParams(collection, verb, locked), ADMIN)).status).toBe(200);
    expect((await callMethod(m, validParams(collection, verb, missing))).status).toBe(404);
  });

  it("setIamPolicy: a stale etag is 409, an unpadded current one is accepted", async () => {
    const get = id(collection, "getIamPolicy");
    const set = id(collection, "setIamPolicy");
    const { etag } = (await callMethod(get, validParams(collection, "getIamPolicy", open))).data as { etag: string };
    const unpadded = etag.replace(/=+$/, "");
    expect((await callMethod(set, validParams(collection, "setIamPolicy", open, unpadded))).status).toBe(200);
    expect((await callMethod(set, validParams(collection, "setIamPolicy", open, etag))).status).toBe(409);
  });

  it("getIamPolicy at the client's default version answers a conditional policy in the version-1 form", async () => {
    const r = await callMethod(id(collection, "getIamPolicy"), { resource: open });
    expect(r.status).toBe(200);
    const policy = r.data as { version: number; bindings: { role: string; condition?: unknown }[] };
    expect(policy.version).toBe(1);
    expect(policy.bindings.some((b) => /_withcond_[0-9a-f]{20}$/.test(b.role) && b.condition === undefined)).toBe(true);
  });
});

describe("cloudresourcemanager.projects.get through Google's Node client", () => {
  it("answers 200, 401, 403 as Google does", async () => {
    expect((await callMethod(PROJECTS_GET, { name: `projects/${OPEN}` })).status).toBe(200);
    expect((await callMethod(PROJECTS_GET, { name: "projects/222222222222" })).status).toBe(401);
    expect((await callMethod(PROJECTS_GET, { name: "projects/no-such-project" })).status).toBe(403);
  });
});

const LISTS = { restorePlans: "gkebackup", endpoints: "aiplatform" } as const;
const OPEN_PARENT = `projects/${OPEN}/locations/us-central1`;
/** The names of one page's items, and its next page token. */
function page(r: Answer, field: string): { names: string[]; next?: string } {
  const data = r.data as Record<string, { name: string }[] | string | undefined>;
  const items = (data[field] as { name: string }[] | undefined) ?? [];
  const next = data.nextPageToken as string | undefined;
  return { names: items.map((i) => i.name), ...(next ? { next } : {}) };
}

describe.each(Object.keys(LISTS) as (keyof typeof LISTS)[])("%s.list through Google's Node client", (collection) => {
  const m = `${LISTS[collection]}.projects.locations.${collection}.list`;
  const locations = `${LISTS[collection]}.projects.locations.list`;
  const listed = (id: string, location = "us-central1") => `projects/${OPEN}/locations/${location}/${collection}/${id}`;

  it("accepts exactly the query parameters of its discovery method, as the client sends them", () => {
    const kind = collection === "restorePlans" ? "restorePlan" : "endpoint";
    for (const [id, served] of [
      [m, LIST_METHODS[kind]],
      [locations, LOCATION_LISTS[kind]],
    ] as const) {
      const doc = methods.get(id)!.method.parameters ?? {};
      const query = Object.entries(doc)
        .filter(([, p]) => p.location === "query")
        .map(([k]) => k);
      expect([...served.parameters].sort(), id).toEqual(query.sort());
    }
  });

  it("pages with pageSize and nextPageToken, filters, and refuses what it cannot do with 400", async () => {
    const first = page(await callMethod(m, { parent: OPEN_PARENT, pageSize: 1 }), collection);
    expect(first.names).toEqual([listed("a")]);
    const second = page(await callMethod(m, { parent: OPEN_PARENT, pageSize: 1, pageToken: first.next }), collection);
    expect(second).toEqual({ names: [listed("b")] });
    expect(page(await callMethod(m, { parent: OPEN_PARENT }), collection).names).toEqual([listed("a"), listed("b")]);
    const filter = collection === "restorePlans" ? `name != "${listed("a")}"` : 'endpoint != "a"';
    expect(page(await callMethod(m, { parent: OPEN_PARENT, filter }), collection).names).toEqual([listed("b")]);
    if (collection === "restorePlans") {
      const desc = page(await callMethod(m, { parent: OPEN_PARENT, orderBy: "name desc" }), collection);
      expect(desc.names).toEqual([listed("b"), listed("a")]);
      expect((await callMethod(m, { parent: OPEN_PARENT, orderBy: "createTime" })).status).toBe(400);
    } else {
      const masked = await callMethod(m, { parent: OPEN_PARENT, readMask: "displayName" });
      expect(masked.data).toEqual({ endpoints: [{}, {}] });
    }
    expect((await callMethod(m, { parent: OPEN_PARENT, pageToken: "not-a-token" })).status).toBe(400);
    const otherFilter = { parent: OPEN_PARENT, pageToken: first.next, filter };
    expect((await callMethod(m, otherFilter)).status).toBe(400);
    expect((await callMethod(m, { parent: OPEN_PARENT, filter: 'labels.team = "x"' })).status).toBe(400);
    expect((await callMethod(m, { parent: OPEN_PARENT, filter: "name = a OR name = b" })).status).toBe(400);
    expect((await callMethod(m, { parent: OPEN_PARENT, pageSize: -1 })).status).toBe(400);
  });

  it("answers 401, 403 and an empty page as Google does", async () => {
    expect((await callMethod(m, { parent: `projects/${LOCKED}/locations/us-central1` })).status).toBe(401);
    expect((await callMethod(m, { parent: `projects/${LOCKED}/locations/us-central1` }, ADMIN)).status).toBe(200);
    expect((await callMethod(m, { parent: `projects/${OPEN}/locations/us-central1` }, FOREIGN)).status).toBe(403);
    expect((await callMethod(m, { parent: "projects/no-such-project/locations/us-central1" })).status).toBe(403);
    expect((await callMethod(m, { parent: `projects/${OPEN}/locations/asia-east1` })).data).toEqual({});
  });

  it("projects.locations.list names the project's locations, paged", async () => {
    const all = page(await callMethod(locations, { name: `projects/${OPEN}` }), "locations");
    expect(all.names).toEqual([`projects/${OPEN}/locations/europe-west1`, `projects/${OPEN}/locations/us-central1`]);
    const one = page(await callMethod(locations, { name: `projects/${OPEN}`, pageSize: 1 }), "locations");
    expect(one.names).toHaveLength(1);
    const rest = await callMethod(locations, { name: `projects/${OPEN}`, pageSize: 1, pageToken: one.next });
    expect(page(rest, "locations").names).toEqual([`projects/${OPEN}/locations/us-central1`]);
    expect((await callMethod(locations, { name: `projects/${OPEN}`, filter: "displayName=tokyo" })).status).toBe(400);
    expect((await callMethod(locations, { name: "projects/no-such-project" })).status).toBe(403);
  });
});

/** A valid call of each served method, for fault injection. */
function faultCall(methodId: string): [Record<string, unknown>, Record<string, string>] {
  if (methodId === PROJECTS_GET) return [{ name: `projects/${OPEN}` }, {}];
  if (methodId.endsWith(".locations.list")) return [{ name: `projects/${OPEN}` }, {}];
  if (methodId.endsWith(".list")) return [{ parent: `projects/${OPEN}/locations/us-central1` }, {}];
  const [, , , collection, verb] = methodId.split(".") as [string, string, string, Collection, string];
  return [validParams(collection, verb, name(OPEN, collection, "a")), {}];
}

const CODES = Object.keys(HTTP_STATUS) as (keyof typeof HTTP_STATUS)[];

describe("every canonical error code, injected, reaches Google's client as Google sends it", () => {
  it.each(METHOD_IDS.map((m) => [m]))("%s", async (methodId) => {
    for (const code of CODES) {
      const faults = { errorRates: { [code]: 1 }, methods: [methodId], seed: 1 };
      const set = await fetch(`${emu.url}/__emulator/faults`, { method: "POST", body: JSON.stringify(faults) });
      expect(set.status).toBe(200);
      const [params, headers] = faultCall(methodId);
      const r = await callMethod(methodId, params, headers);
      expect(r.status, code).toBe(HTTP_STATUS[code]);
      expect((r.data as { error: { status: string } }).error.status).toBe(code);
    }
    await fetch(`${emu.url}/__emulator/faults`, { method: "DELETE" });
  });
});

afterAll(() => {
  // Coverage: every served method was answered with 200 and with every status it can answer.
  const every = [200, ...new Set(Object.values(HTTP_STATUS))];
  for (const m of METHOD_IDS) expect([...(seen.get(m) ?? [])], m).toEqual(expect.arrayContaining(every));
});
