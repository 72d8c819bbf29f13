// The HTTP layer under the transport: node:http / node:https with keep-alive agents (through the
// proxy the environment names, see ./proxy.ts), behind the part of fetch's shape the transport
// uses (so a test can pass any fetch-compatible fake).
// Why not the global fetch: on 1,000 getIamPolicy calls at parallelism 10 against the emulator it
// spent 2.7x the CPU of node:http (1.25 s vs 0.45 s: Request/Response objects, web streams,
// header guards), which on a 2-core machine shows up as time above the network bound.
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import type { HttpProxyAgent } from "http-proxy-agent";
import type { HttpsProxyAgent } from "https-proxy-agent";
import { proxyFor } from "./proxy.js";
import { TargetCache } from "./request-target.js";

export interface HttpRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Aborts the attempt (per-attempt timeout); the promise rejects with an AbortError. */
  signal: AbortSignal;
}

/** What the transport reads of a response; the global fetch's Response has the same members. */
export interface HttpResponse {
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export type HttpFn = (url: string, init: HttpRequest) => Promise<HttpResponse>;

/** A whole response as plain data: what the HTTP worker (./worker-http.ts) sends back. */
export interface RawResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HttpFn that answers with plain data. */
export type RawHttpFn = (url: string, init: HttpRequest) => Promise<RawResponse>;

/** Response bodies above this are not read: the socket is destroyed (a policy of 1,500
 *  principals is well under 1 MiB). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** The `code` of the error a response over MAX_RESPONSE_BYTES rejects with. */
export const RESPONSE_TOO_LARGE = "ERESPONSETOOLARGE";

export function responseTooLarge(declared?: number): Error {
  const what = declared !== undefined ? ` (Content-Length ${declared})` : "";
  return Object.assign(
    new Error(`the response body is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB${what}; stopped reading it`),
    { code: RESPONSE_TOO_LARGE },
  );
}

/**
 * A pooled connection idle longer than this is closed instead of reused. Servers close idle
 * keep-alive connections (Node's after 5 s; Google's front ends later), and while the CLI is busy
 * (planning 100,000 resources between its reads and its writes) that close is not seen: a request
 * sent on such a socket fails with ECONNRESET. The agent's own idle timer cannot help then (it is
 * a timer of the same busy event loop), so the pool is pruned just before each request.
 */
const MAX_IDLE_MS = 4_000;

// One agent per scheme (and per proxy) for the process: connections are reused across calls and
// clients. Idle sockets are unref'd by the agent, so they never keep the process alive.
const AGENTS = {
  "http:": stampingIdle(new http.Agent({ keepAlive: true })),
  "https:": stampingIdle(new https.Agent({ keepAlive: true })),
};
const PROXY_AGENTS = new Map<string, http.Agent>();

/** When each pooled socket went back to the pool. */
const idleSince = new WeakMap<Socket, number>();

/** `agent`, recording when a socket is returned to its pool. */
function stampingIdle<A extends http.Agent>(agent: A): A {
  // Node returns whether the socket was kept (its types say void).
  const keep = agent.keepSocketAlive.bind(agent) as unknown as (socket: Socket) => boolean;
  agent.keepSocketAlive = (socket: Socket) => {
    const kept = keep(socket);
    if (kept) idleSince.set(socket, Date.now());
    return kept;
  };
  return agent;
}

/** Closes and removes from `agent`'s pool the sockets idle for more than `maxIdleMs`. Runs before
 *  every request: it allocates nothing unless a socket is to go. */
function dropIdle(agent: http.Agent, maxIdleMs: number): void {
  const now = Date.now();
  const pools = agent.freeSockets as Record<string, Socket[] | undefined>;
  for (const name in pools) {
    const pool = pools[name];
    if (!pool) continue;
    let stale = 0;
    for (const s of pool) if (isStale(s, now, maxIdleMs)) stale++;
    if (stale === 0) continue;
    const fresh: Socket[] = [];
    for (const s of pool) {
      if (isStale(s, now, maxIdleMs)) s.destroy();
      else fresh.push(s);
    }
    if (fresh.length) pools[name] = fresh;
    else delete pools[name];
  }
}

function isStale(s: Socket, now: number, maxIdleMs: number): boolean {
  return s.destroyed || now - (idleSince.get(s) ?? now) > maxIdleMs;
}

/** The agent for `target`: direct, or through the proxy the environment names (./proxy.ts). An
 *  https target is tunnelled with CONNECT; an http one is sent to the proxy in absolute form. */
function agentFor(target: URL, env: NodeJS.ProcessEnv): http.Agent {
  const proxy = proxyFor(target, env);
  if (!proxy) return AGENTS[target.protocol as keyof typeof AGENTS];
  const key = `${target.protocol} ${proxy.url.href}`;
  let agent = PROXY_AGENTS.get(key);
  if (!agent) {
    // The proxy agents (CommonJS, with agent-base and debug) are required only when a proxy is used.
    const require = createRequire(import.meta.url);
    agent =
      target.protocol === "https:"
        ? new (require("https-proxy-agent") as { HttpsProxyAgent: typeof HttpsProxyAgent }).HttpsProxyAgent(proxy.url, {
            keepAlive: true,
          })
        : new (require("http-proxy-agent") as { HttpProxyAgent: typeof HttpProxyAgent }).HttpProxyAgent(proxy.url, {
            keepAlive: true,
          });
    PROXY_AGENTS.set(key, stampingIdle(agent));
  }
  return agent;
}

/** The error of an attempt its signal aborted: Node's own (what `http.request`'s `signal` option gives). */
export function abortError(reason: unknown): Error {
  return Object.assign(new Error("The operation was aborted", { cause: reason }), {
    name: "AbortError",
    code: "ABORT_ERR",
  });
}

/** The response as the transport reads it, from its plain data. */
export function responseOf(raw: RawResponse): HttpResponse {
  const { headers, body } = raw;
  return {
    status: raw.status,
    statusText: raw.statusText,
    headers: {
      get(name) {
        const v = headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
      },
    },
    text: async () => body,
  };
}

/** Reads `res` whole into `resolve`, or rejects: too large, cut, aborted. */
function readResponse(
  req: http.ClientRequest,
  res: http.IncomingMessage,
  signal: AbortSignal,
  resolve: (r: RawResponse) => void,
  reject: (e: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  // Too large: stop reading and destroy the socket (never returned to the pool).
  const refuse = (declared?: number) => {
    reject(responseTooLarge(declared));
    req.destroy();
  };
  const declared = Number(res.headers["content-length"]);
  if (declared > MAX_RESPONSE_BYTES) return refuse(declared);
  res.on("data", (c: Buffer) => {
    size += c.length;
    if (size > MAX_RESPONSE_BYTES) refuse();
    else chunks.push(c);
  });
  res.on("error", reject);
  // A connection cut in the middle of the body ends without 'end': not a response.
  res.on("close", () => {
    if (!res.complete)
      reject(
        signal.aborted
          ? signal.reason
          : Object.assign(new Error("the connection closed before the response was complete"), { code: "ECONNRESET" }),
      );
  });
  res.on("end", () =>
    resolve({
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? "",
      headers: res.headers,
      body: chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"),
    }),
  );
}

/** Sends one request and buffers the whole response body. Network errors reject with Node's
 *  error (its `code`: ECONNRESET, ECONNREFUSED…), as the transport expects. `env` names proxies:
 *  it is read once per origin (scheme, host and port) for the life of the function. */
export function createNodeHttp(env: NodeJS.ProcessEnv = process.env, opts: { maxIdleMs?: number } = {}): HttpFn {
  const raw = createRawNodeHttp(env, opts);
  return (url, init) => raw(url, init).then(responseOf);
}

/** createNodeHttp, answering with plain data (the HTTP worker's side, ./http-worker.ts). */
export function createRawNodeHttp(env: NodeJS.ProcessEnv = process.env, opts: { maxIdleMs?: number } = {}): RawHttpFn {
  const maxIdleMs = opts.maxIdleMs ?? MAX_IDLE_MS;
  const targets = new TargetCache();
  const agents = new WeakMap<URL, http.Agent>();
  return (url, init) =>
    new Promise<RawResponse>((settle, fail) => {
      const { signal } = init;
      // Already aborted: nothing is sent.
      if (signal.aborted) return fail(abortError(signal.reason));
      const { target, options } = targets.resolve(url);
      const scheme = target.protocol === "https:" ? https : target.protocol === "http:" ? http : undefined;
      if (!scheme) return fail(new TypeError(`unsupported URL scheme "${target.protocol}" in ${url}`));
      let agent = agents.get(target);
      if (!agent) {
        try {
          agent = agentFor(target, env);
        } catch (e) {
          return fail(e);
        }
        agents.set(target, agent);
      }
      dropIdle(agent, maxIdleMs);
      const headers: Record<string, string | number> = { ...init.headers };
      if (init.body !== undefined) headers["Content-Length"] = Buffer.byteLength(init.body);
      // The signal is watched here, not by http.request's `signal` option (which adds an
      // end-of-stream watcher and its listeners to every request): one listener, removed at the end.
      const onAbort = () => req.destroy(abortError(signal.reason));
      const done = () => signal.removeEventListener("abort", onAbort);
      const resolve = (r: RawResponse) => (done(), settle(r));
      const reject = (e: unknown) => (done(), fail(e));
      options.method = init.method;
      options.headers = headers;
      options.agent = agent;
      const req = scheme.request(options, (res) => readResponse(req, res, signal, resolve, reject));
      req.on("error", reject);
      // A proxy that refuses the tunnel answers CONNECT itself; its answer is not the cloud's.
      req.once("proxyConnect", (c: { statusCode: number; statusText?: string }) => {
        if (c.statusCode !== 200) req.destroy(proxyRefused(target, env, c));
      });
      signal.addEventListener("abort", onAbort, { once: true });
      req.end(init.body);
    });
}

/** The error of a CONNECT the proxy refused (403 by policy, 407 for credentials, 404, 5xx):
 *  named as the proxy's, without its credentials. A gateway error (5xx) may pass: it is retried. */
function proxyRefused(target: URL, env: NodeJS.ProcessEnv, c: { statusCode: number; statusText?: string }): Error {
  const proxy = proxyFor(target, env)?.display ?? "the proxy";
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  const answer = `${c.statusCode}${c.statusText ? ` ${c.statusText}` : ""}`;
  const hint =
    c.statusCode === 407 ? " (it wants credentials: put them in HTTPS_PROXY as http://user:password@host:port)" : "";
  const e = new Error(`the proxy ${proxy} refused the tunnel to ${target.hostname}:${port}: ${answer}${hint}`);
  return Object.assign(e, { code: c.statusCode >= 500 ? "EPROXYGATEWAY" : "EPROXYREFUSED" });
}

/** HTTP with the process environment's proxy settings. */
export const nodeHttp: HttpFn = createNodeHttp();
