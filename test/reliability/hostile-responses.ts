// A malicious loopback cloud for the bad-input fuzzer (issue 12): one node:http server on
// 127.0.0.1 (test/e2e/hostile-server.ts) that serves many fuzz cases at once. Each case plans
// its own stack whose project is `fz-case-{id}`, so the server knows from the URL which case a
// request belongs to and answers it with that case's n-th fuzzed response: any status, wrong
// content types, Retry-After values of every kind, invalid and truncated JSON, bodies of the
// wrong shape, hostile text (escape sequences, bidi marks, NUL, megabytes), JSON nested
// 100,000 deep, bodies over the 32 MiB cap, slow drips, resets and answers that never end.
import fc from "fast-check";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Federation, Policy } from "../../src/generated/schemas.js";
import { BINDING, GET_FEDERATION, LAKE, MEMBER } from "../fixtures/builders.js";
import { startHostile, type HostileServer, type Seen } from "../e2e/hostile-server.js";

const MiB = 1024 * 1024;

export const projectOf = (id: number) => `fz-case-${id}`;

/** Hostile text for messages, labels, members and roles. */
const TEXT = [
  "\u001b[2J\u001b[H",
  "\u001b]0;pwned\u0007",
  "\r\nApply complete! Resources: 9 added, 0 changed, 0 destroyed.",
  "\u202eevil\u202c",
  "\u0000",
  "\u009b31m",
  "ya29.secret-token",
  "${lake.labels.owner}",
  "../../etc/passwd",
  "",
  "h".repeat(MiB),
  "\ud800",
];

type PolicyEdit =
  | "membersString"
  | "bindingsObject"
  | "noRole"
  | "etagNumber"
  | "array"
  | "versionString"
  | "version99"
  | "bindingsNull"
  | "crowd"
  | "hostileMember"
  | "hostileRole"
  | "badCondition"
  | "conditionNoTitle"
  | "duplicateBindings"
  | "hugeEtag"
  | "deepUnknown"
  | "deepAudit"
  | "memberNull"
  | "protoKey"
  | "empty";
type FederationEdit =
  | "labelsString"
  | "ownerHostile"
  | "ownerObject"
  | "noName"
  | "otherName"
  | "uriNumber"
  | "protoLabels"
  | "deep"
  | "empty"
  | "array";

export type Body =
  | { kind: "valid"; edits: (PolicyEdit | FederationEdit)[]; text: number }
  | {
      kind: "error";
      code: number;
      status: string;
      text: number;
      shape: "google" | "wrongTypes" | "string" | "null" | "retryInfo";
    }
  | { kind: "raw"; text: string };

export interface ResponseSpec {
  delayMs: number;
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  body: Body;
  delivery:
    "whole" | "truncate" | "drip" | "reset" | "noEnd" | "declaredHuge" | "streamHuge" | "chunked" | "wrongLength";
}

const POLICY_EDITS: PolicyEdit[] = [
  "membersString",
  "bindingsObject",
  "noRole",
  "etagNumber",
  "array",
  "versionString",
  "version99",
  "bindingsNull",
  "crowd",
  "hostileMember",
  "hostileRole",
  "badCondition",
  "conditionNoTitle",
  "duplicateBindings",
  "hugeEtag",
  "deepUnknown",
  "deepAudit",
  "memberNull",
  "protoKey",
  "empty",
];
const FEDERATION_EDITS: FederationEdit[] = [
  "labelsString",
  "ownerHostile",
  "ownerObject",
  "noName",
  "otherName",
  "uriNumber",
  "protoLabels",
  "deep",
  "empty",
  "array",
];
const STATUSES = [
  200, 200, 200, 200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 404, 408, 409, 412, 418, 429, 429, 500, 500,
  501, 502, 503, 503, 504, 599,
];
const CANONICAL = [
  "UNAVAILABLE",
  "RESOURCE_EXHAUSTED",
  "DEADLINE_EXCEEDED",
  "INTERNAL",
  "NOT_FOUND",
  "PERMISSION_DENIED",
  "ABORTED",
  "INVALID_ARGUMENT",
  "BOGUS",
  "",
];
const RETRY_AFTER = [
  "0",
  "1",
  "0.01",
  "0.3",
  "-1",
  "abc",
  "99999999999999999999999",
  "1e3",
  " 1 ",
  "",
  "NaN",
  "Infinity",
  "3600",
  "date+0.3",
  "date-3600",
  "date+3153600000",
  "Thu, 01 Jan 1970 00:00:00 GMT",
  "Fri, 31 Dec 9999 23:59:59 GMT",
];
const RAW = [
  '{"bindings": [{"role": ',
  "{",
  "[",
  "nul",
  "<html><body>502 Bad Gateway</body></html>",
  "",
  "   ",
  "\u0000\u0001\u0002",
  '{"bindings": []}garbage',
  '{"a":1,"a":2}',
  "\ufeff{}",
  '{"etag": "\\ud800"}',
  "1e999",
  "null",
  "true",
  '"policy"',
  "[]",
];

const responseSpec: fc.Arbitrary<ResponseSpec> = fc.record({
  delayMs: fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, fc.integer({ min: 1, max: 300 })),
  status: fc.constantFrom(...STATUSES),
  contentType: fc.constantFrom(
    "application/json",
    "application/json",
    "application/json; charset=utf-8",
    "text/html",
    "application/json; charset=utf-16",
    "application/x-protobuf",
    "text/plain",
    null,
  ),
  retryAfter: fc.option(fc.constantFrom(...RETRY_AFTER), { freq: 2 }),
  body: fc.oneof(
    {
      arbitrary: fc.record({
        kind: fc.constant("valid" as const),
        edits: fc.array(fc.constantFrom<PolicyEdit | FederationEdit>(...POLICY_EDITS, ...FEDERATION_EDITS), {
          maxLength: 2,
        }),
        text: fc.nat(),
      }),
      weight: 5,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant("error" as const),
        code: fc.constantFrom(...STATUSES),
        status: fc.constantFrom(...CANONICAL),
        text: fc.nat(),
        shape: fc.constantFrom(
          "google" as const,
          "google" as const,
          "wrongTypes" as const,
          "string" as const,
          "null" as const,
          "retryInfo" as const,
        ),
      }),
      weight: 3,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant("raw" as const),
        text: fc.oneof(fc.constantFrom(...RAW), fc.string({ maxLength: 40 })),
      }),
      weight: 2,
    },
  ),
  delivery: fc.oneof(
    { arbitrary: fc.constant("whole" as const), weight: 40 },
    {
      arbitrary: fc.constantFrom(
        "truncate" as const,
        "drip" as const,
        "reset" as const,
        "chunked" as const,
        "wrongLength" as const,
        "declaredHuge" as const,
        "noEnd" as const,
      ),
      weight: 8,
    },
    { arbitrary: fc.constant("streamHuge" as const), weight: 1 },
  ),
});

export const responseCase = fc.record({
  /** The n-th request of the case gets responses[n-1]; the last one repeats. */
  responses: fc.array(responseSpec, { minLength: 1, maxLength: 4 }),
  /** After the fuzzed responses, answer correctly (a cloud that recovers). */
  recovers: fc.boolean(),
  /** The case has a prior state (so refresh reads its resources too). */
  withState: fc.boolean(),
});
export type ResponseCase = typeof responseCase extends fc.Arbitrary<infer T> ? T : never;

/** The stack of case `id`: a federation read feeding a member, a binding, a conditional binding,
 *  a whole-policy resource with audit configs and a getEndpointIamPolicy read. */
export function caseStack(id: number): string {
  const p = projectOf(id);
  return (
    `name: fz
provider:
  project: ${p}
  location: us-central1
variables:
  lake:
    fn::invoke:
      ` +
    `function: ${GET_FEDERATION}
      arguments: { federationId: lake, location: us-central1 }
  scorer:
    ` +
    `fn::invoke:
      function: cloudnative:aiplatform/v1beta1:getEndpointIamPolicy
      arguments: { ` +
    `endpointId: scorer, location: us-central1 }
resources:
  monthly:
    type: ` +
    `cloudnative:backup/v1:RestorePlanIamPolicy
    properties:
      name: monthly
      bindings: [{ role: ` +
    `roles/gkebackup.viewer, members: [user:alice@example.com] }]
      auditConfigs: [{ service: allServices, ` +
    `auditLogConfigs: [{ logType: DATA_READ, exemptedMembers: [user:ops@example.com] }] }]
  viewers:
    ` +
    `type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: ` +
    `[user:alice@example.com] }
  admins:
    type: ${BINDING}
    properties:
      name: weekly
      role: ` +
    `roles/gkebackup.admin
      members: [user:oncall@example.com]
      condition: { title: until-2099, ` +
    `expression: 'request.time < timestamp("2099-01-01T00:00:00Z")' }
  invoker:
    type: ${MEMBER}
    ` +
    `properties: { name: churn, role: roles/aiplatform.user, member: "serviceAccount:\${lake.labels.owner}@${p}` +
    `.iam.gserviceaccount.com" }
outputs:
  owner: \${lake.labels.owner}
  scorerEtag: \${scorer.etag}
`
  );
}

/** A marker for JSON nested `depth` deep: JSON.stringify cannot write it, so bodyText splices it in. */
const deep = (depth: number) => `\u0000DEEP:${depth}`;
const spliceDeep = (json: string) =>
  json.replace(/"\\u0000DEEP:(\d+)"/g, (_, d: string) => "[".repeat(Number(d)) + "]".repeat(Number(d)));

function policyBody(edits: readonly string[], text: string): unknown {
  let asArray = false;
  let p: Record<string, unknown> = {
    version: 1,
    bindings: [{ role: "roles/foreign.owner", members: ["user:owner@example.com"] }],
    etag: "BwXfuzz=",
  };
  const b0 = () => (p.bindings as Record<string, unknown>[])[0]!;
  for (const e of edits) {
    if (e === "membersString") b0().members = "user:alice@example.com";
    else if (e === "bindingsObject") p.bindings = { role: "roles/x", members: [] };
    else if (e === "noRole") delete b0().role;
    else if (e === "etagNumber") p.etag = 7;
    else if (e === "array") asArray = true;
    else if (e === "versionString") p.version = "3";
    else if (e === "version99") p.version = 99;
    else if (e === "bindingsNull") p.bindings = null;
    else if (e === "crowd") b0().members = Array.from({ length: 1_600 }, (_, i) => `user:c${i}@example.com`);
    else if (e === "hostileMember") b0().members = [`user:${text}@example.com`, text];
    else if (e === "hostileRole") b0().role = `roles/${text}`;
    else if (e === "badCondition") b0().condition = { title: text || "t", expression: "request.time +" };
    else if (e === "conditionNoTitle") b0().condition = { expression: "true" };
    else if (e === "duplicateBindings")
      (p.bindings as unknown[]).push(
        structuredClone(b0()),
        { role: "roles/gkebackup.viewer", members: ["user:alice@example.com"] },
        { role: "roles/gkebackup.viewer", members: ["user:ALICE@example.com"] },
      );
    else if (e === "hugeEtag") p.etag = "e".repeat(2 * MiB);
    else if (e === "deepUnknown") p.futureField = deep(100_000);
    else if (e === "deepAudit")
      p.auditConfigs = [
        {
          service: "allServices",
          auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: deep(50_000) }],
          x: deep(100_000),
        },
      ];
    else if (e === "memberNull") b0().members = [null];
    else if (e === "protoKey")
      p = JSON.parse(
        `{"__proto__": {"bindings": []}, "constructor": {"x": 1}, "bindings": ${JSON.stringify(p.bindings)}}`,
      ) as Record<string, unknown>;
    else if (e === "empty") p = {};
  }
  return asArray ? [p] : p;
}

function federationBody(name: string, edits: readonly string[], text: string): unknown {
  let f: Record<string, unknown> = {
    ...(structuredClone(LAKE) as Federation as unknown as Record<string, unknown>),
    name,
  };
  for (const e of edits) {
    if (e === "labelsString") f.labels = "owner=x";
    else if (e === "ownerHostile") f.labels = { owner: text };
    else if (e === "ownerObject") f.labels = { owner: { x: 1 } };
    else if (e === "noName") delete f.name;
    else if (e === "otherName") f.name = "projects/elsewhere/locations/x/federations/y";
    else if (e === "uriNumber") f.endpointUri = 9083;
    else if (e === "protoLabels")
      f.labels = JSON.parse('{"__proto__": {"owner": "polluted"}, "constructor": "c"}') as unknown;
    else if (e === "deep")
      f.backendMetastores = { "1": { name: "x", metastoreType: "DATAPROC_METASTORE", extra: deep(100_000) } };
    else if (e === "empty") f = {};
    else if (e === "array") f = [f] as unknown as Record<string, unknown>;
  }
  return f;
}

function errorBody(b: Extract<Body, { kind: "error" }>, text: string): unknown {
  const message = `fuzzed failure ${text}`;
  switch (b.shape) {
    case "google":
      return { error: { code: b.code, message, status: b.status } };
    case "wrongTypes":
      return { error: { code: String(b.code), message: { text: message }, status: 7, details: "x" } };
    case "string":
      return { error: message };
    case "null":
      return { error: null };
    case "retryInfo":
      return {
        error: {
          code: b.code,
          message,
          status: b.status,
          details: [
            {
              "@type": "type.googleapis.com/google.rpc.RetryInfo",
              retryDelay: pick(["0.2s", "99999999999s", "-5s", "abc", "1e9s", ""], b.text),
            },
          ],
        },
      };
  }
}

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length]!;

/** The body text of a response to the request `seen`. */
function bodyText(spec: ResponseSpec, seen: Seen): string {
  const b = spec.body;
  if (b.kind === "raw") return b.text;
  const text = pick(TEXT, b.kind === "valid" ? b.text : b.text);
  if (b.kind === "error") return JSON.stringify(errorBody(b, text));
  const fed = /\/(projects\/[^:?]+\/federations\/[^:?/]+)/.exec(seen.url);
  return spliceDeep(JSON.stringify(fed ? federationBody(fed[1]!, b.edits, text) : policyBody(b.edits, text)));
}

function retryAfterValue(v: string): string {
  const m = /^date([+-]\d+(?:\.\d+)?)$/.exec(v);
  return m ? new Date(Date.now() + Number(m[1]) * 1000).toUTCString() : v;
}

/** Sends `spec` as the answer to `seen`. */
async function answer(spec: ResponseSpec, req: IncomingMessage, res: ServerResponse, seen: Seen): Promise<void> {
  if (spec.delayMs) await new Promise((r) => setTimeout(r, spec.delayMs));
  if (res.destroyed) return;
  if (spec.delivery === "reset") return void req.socket.destroy();
  const text = Buffer.from(bodyText(spec, seen), "utf8");
  const headers: Record<string, string | number> = {};
  if (spec.contentType) headers["Content-Type"] = spec.contentType;
  if (spec.retryAfter !== null) headers["Retry-After"] = retryAfterValue(spec.retryAfter);
  if ([301, 302].includes(spec.status)) headers.Location = "http://127.0.0.1:1/elsewhere";
  const stop = () => !res.destroyed && res.socket?.destroy();
  switch (spec.delivery) {
    case "whole":
      res.writeHead(spec.status, { ...headers, "Content-Length": text.length });
      return void res.end(text);
    case "chunked":
      res.writeHead(spec.status, headers);
      res.write(text.subarray(0, text.length >> 1));
      return void setTimeout(() => res.end(text.subarray(text.length >> 1)), 5);
    case "truncate":
      res.writeHead(spec.status, { ...headers, "Content-Length": text.length });
      res.write(text.subarray(0, text.length >> 1));
      return void setTimeout(stop, 5);
    case "wrongLength":
      res.writeHead(spec.status, { ...headers, "Content-Length": Math.max(0, text.length - 3) });
      return void res.end(text.subarray(0, Math.max(0, text.length - 3)));
    case "noEnd":
      res.writeHead(spec.status, { ...headers, "Content-Length": text.length + 10 });
      return void res.write(text);
    case "drip": {
      // A byte every 50 ms: short bodies finish within the call deadline, long ones do not.
      res.writeHead(spec.status, { ...headers, "Content-Length": text.length });
      let i = 0;
      const timer = setInterval(
        () => (i < text.length ? res.write(text.subarray(i, ++i)) : (clearInterval(timer), res.end())),
        50,
      );
      return void res.on("close", () => clearInterval(timer));
    }
    case "declaredHuge":
      res.writeHead(spec.status, { ...headers, "Content-Length": 64 * MiB });
      return void res.write(text);
    case "streamHuge": {
      // 48 MiB, more than the 32 MiB cap, without a Content-Length. Counted: a 204 or 304 has no
      // body, and Node drops what is written to it without ever pushing back.
      res.writeHead(spec.status, headers);
      const chunk = Buffer.alloc(MiB, " ");
      res.write('{"bindings": [], "etag": "');
      let sent = 0;
      const pump = (): void => {
        while (!res.destroyed && sent < 48 * MiB) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!res.destroyed) res.end('"}');
      };
      res.on("close", () => res.removeAllListeners("drain"));
      return pump();
    }
  }
}

/** A correct answer: an empty policy, or the lake federation under the requested name. */
function correct(res: ServerResponse, seen: Seen): void {
  const fed = /\/(projects\/[^:?]+\/federations\/[^:?/]+)/.exec(seen.url);
  const body = JSON.stringify(
    fed ? { ...LAKE, name: fed[1] } : ({ version: 1, bindings: [], etag: "BwXok=" } satisfies Policy),
  );
  res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

export interface ResponseServer {
  server: HostileServer;
  /** Serves case `id` from now on; returns what it saw. */
  register(id: number, c: ResponseCase): Seen[];
  unregister(id: number): void;
}

/** One server for every case (the case is the project in the URL). */
export async function startResponseServer(): Promise<ResponseServer> {
  const cases = new Map<number, { c: ResponseCase; seen: Seen[] }>();
  const server = await startHostile(async (req, res, seen) => {
    const id = Number(/projects\/fz-case-(\d+)\//.exec(decodeURIComponent(seen.url))?.[1] ?? NaN);
    const entry = cases.get(id);
    if (!entry) {
      res.writeHead(404, { "Content-Type": "application/json" });
      return void res.end('{"error": {"code": 404, "status": "NOT_FOUND", "message": "no such case"}}');
    }
    entry.seen.push(seen);
    const n = entry.seen.length;
    const list = entry.c.responses;
    if (entry.c.recovers && n > list.length) return correct(res, seen);
    await answer(list[Math.min(n, list.length) - 1]!, req, res, seen);
  });
  return {
    server,
    register(id, c) {
      const seen: Seen[] = [];
      cases.set(id, { c, seen });
      return seen;
    },
    unregister: (id) => void cases.delete(id),
  };
}
