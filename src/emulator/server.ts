// HTTP plumbing: body limits, routing to the API or the admin handlers, fault injection (lost
// answers to committed writes too), stats, Google's JSON error envelope for every refusal (never
// HTML, never a crash), graceful close.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setMaxListeners } from "node:events";
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { ADMIN_PREFIX, handleAdmin } from "./admin.js";
import { handleApi } from "./api.js";
import type { EmulatorContext, Reply } from "./context.js";
import { ApiError, invalidArgument, JSON_CONTENT_TYPE, notFound } from "./errors.js";
import { checkFields, partialResponse } from "./fields.js";
import { foreignRequest, type OriginPolicy } from "./origin.js";
import { handleProjectGet } from "./projects-api.js";
import { handleList } from "./lists.js";
import { decodePath, matchRoute, PROJECTS_GET, type EmulatorRoute } from "./routes.js";
import { OBJECT_KINDS } from "../gcp/object-kinds.js";

/** Request bodies above this are refused without being buffered. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

const TOO_LARGE = Symbol("too large");
const CLIENT_GONE = Symbol("client gone");
/** After refusing a large body we discard this much more so the client can read the answer; then we cut. */
const DISCARD_LIMIT = 8 * MAX_BODY_BYTES;

function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE | typeof CLIENT_GONE> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared === 0) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const refuse = (): void => {
      done = true;
      chunks.length = 0;
      resolve(TOO_LARGE);
    };
    if (declared > MAX_BODY_BYTES) refuse();
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (done) {
        // Discarding; a client that never stops sending gets its connection cut.
        if (size > DISCARD_LIMIT) req.socket.destroy();
        return;
      }
      if (size > MAX_BODY_BYTES) refuse();
      else chunks.push(chunk);
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    // A client that disconnects mid-body ("aborted" error) just goes away.
    req.on("error", () => {
      if (done) return;
      done = true;
      resolve(CLIENT_GONE);
    });
    req.on("close", () => {
      if (done) return;
      done = true;
      resolve(CLIENT_GONE);
    });
  });
}

function errorReply(e: ApiError): Reply {
  return { status: e.httpStatus, code: e.status, body: JSON.stringify(e), headers: e.headers };
}

export interface EmulatorServer {
  server: Server;
  /** Stops accepting, waits briefly for requests in flight, then drops every connection. */
  shutdown(graceMs?: number): Promise<void>;
}

/** The HTTP side of the emulator: one instance per server, holding what its requests share. */
class EmulatorHttp {
  inFlight = 0;
  drained: (() => void) | undefined;
  /** Connections of refused foreign requests: closed after the 403, whatever follows on them. */
  readonly refused = new WeakSet<Socket>();
  /** The Host and Origin each connection was last admitted with (see foreign). */
  private readonly admitted = new WeakMap<Socket, { host: string | undefined; origin: string | undefined }>();
  /** Cancels injected latency on shutdown, so no timer outlives close(). */
  readonly stopping = new AbortController();

  constructor(
    readonly ctx: EmulatorContext,
    readonly origin: OriginPolicy,
  ) {
    // Every delayed request listens on this one signal; there may be thousands at once.
    setMaxListeners(0, this.stopping.signal);
  }

  send(req: IncomingMessage, res: ServerResponse, reply: Reply, started: number): void {
    const headers: Record<string, string | number> = {
      "Content-Type": JSON_CONTENT_TYPE,
      "Content-Length": Buffer.byteLength(reply.body),
      ...reply.headers,
    };
    if (this.ctx.closing || this.refused.has(req.socket)) headers.Connection = "close";
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(reply.status, headers);
      res.end(reply.body);
    }
    if (this.ctx.log)
      this.ctx.log(
        `${req.method} ${(req.url ?? "").split("?")[0]} ${reply.status} ` +
          `${reply.code} ${(performance.now() - started).toFixed(1)}ms`,
      );
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { ctx } = this;
    const started = performance.now();
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? undefined : new URLSearchParams(url.slice(q + 1));
    const method = req.method ?? "GET";
    const path = decodePath(rawPath);
    let route: EmulatorRoute | undefined;
    try {
      // Before anything is read, counted or changed: no web page may drive the emulator.
      const foreign = this.foreign(req);
      if (foreign) {
        // Its body is not read: the connection closes after the answer (see clientError).
        this.refused.add(req.socket);
        throw new ApiError("PERMISSION_DENIED", foreign, { reason: "FOREIGN_ORIGIN" });
      }
      if (path === undefined) throw invalidArgument(`Malformed percent-encoding in path ${JSON.stringify(rawPath)}.`);
      const admin = path.startsWith(ADMIN_PREFIX);
      route = admin ? undefined : matchRoute(method, path);
      if (!admin && !route) {
        // Drain any body so the keep-alive connection stays usable.
        req.resume();
        throw notFound(`The requested URL ${method} ${rawPath} was not found on this server.`);
      }
      if (route) ctx.stats.request(route.method);
      const body = await this.body(req, method, route);
      // A malformed selector is refused before the method runs (after the body is read, so the
      // keep-alive connection stays usable).
      if (route && body !== CLIENT_GONE) checkFields(query);
      if (body === CLIENT_GONE) return;
      const reply = partialResponse(await this.reply(route, method, path, query, req, body), route && query);
      if (route && reply.code === "OK") {
        const lost = ctx.faults.lose(route.method);
        if (lost) {
          // The write is committed (and durable); only its answer is lost.
          ctx.stats.lostResponse(route.method, lost.kind);
          ctx.log?.(`${method} ${rawPath}: the write was committed; its answer is lost (${lost.kind})`);
          if (lost.error) throw lost.error;
          // No answer at all: a TCP reset, so the client sees ECONNRESET.
          if (!req.socket.destroyed) req.socket.resetAndDestroy();
          return;
        }
      }
      if (route) ctx.stats.response(route.method, reply.code);
      this.send(req, res, reply, started);
    } catch (e) {
      const reply = errorReply(this.apiError(e, method, rawPath));
      if (route) ctx.stats.response(route.method, reply.code);
      this.send(req, res, reply, started);
    }
  }

  /** The request body (none for GET and HEAD); CLIENT_GONE when the client left. */
  private async body(
    req: IncomingMessage,
    method: string,
    route: EmulatorRoute | undefined,
  ): Promise<Buffer | undefined | typeof CLIENT_GONE> {
    if (method === "GET" || method === "HEAD") return undefined;
    const b = await readBody(req);
    if (b === CLIENT_GONE) {
      if (route) this.ctx.stats.response(route.method, "CANCELLED");
      return CLIENT_GONE;
    }
    // Answer now; the rest of the body is discarded as it arrives (never buffered), so the client
    // can read the answer and the connection stays usable.
    if (b === TOO_LARGE) throw invalidArgument(`Request payload size exceeds the limit: ${MAX_BODY_BYTES} bytes.`);
    return b;
  }

  /** Why `req` is refused (foreignRequest), or undefined. A connection that was served keeps its
   *  verdict while it sends the same Host and Origin: the answer depends only on them, the
   *  connection's local address and port, and the server's policy. */
  private foreign(req: IncomingMessage): string | undefined {
    const { host, origin } = req.headers;
    const known = this.admitted.get(req.socket);
    if (known && known.host === host && known.origin === origin) return undefined;
    const why = foreignRequest(
      req.headers,
      { port: req.socket.localPort, address: req.socket.localAddress },
      this.origin,
    );
    if (!why) this.admitted.set(req.socket, { host, origin });
    return why;
  }

  /** The answer of an API route (with injected faults) or of the admin API. */
  private async reply(
    route: EmulatorRoute | undefined,
    method: string,
    path: string,
    query: URLSearchParams | undefined,
    req: IncomingMessage,
    body: Buffer | undefined,
  ): Promise<Reply> {
    const { ctx } = this;
    if (!route) return handleAdmin(ctx, method, path, query, body);
    const fault = ctx.faults.decide(route.method);
    if (fault && fault.delayMs > 0)
      await sleep(fault.delayMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    if (ctx.closing) throw new ApiError("UNAVAILABLE", "The emulator is shutting down.", { reason: "SHUTTING_DOWN" });
    if (fault?.error) throw fault.error;
    // Quotas are per consumer project: one bucket whether the path names it by ID or by number.
    const kind = route.kind === "list" ? route.of : route.kind;
    const service = kind === "project" ? PROJECTS_GET.service : OBJECT_KINDS[kind].service;
    const write = route.kind !== "project" && route.kind !== "list" && route.verb === "setIamPolicy";
    const overQuota = ctx.faults.quota(service, ctx.store.projectId(route.project), write);
    if (overQuota) throw overQuota;
    if (route.kind === "list") return handleList(ctx, route, query, req.headers, body);
    return route.kind === "project"
      ? handleProjectGet(ctx, route, query, req.headers)
      : handleApi(ctx, { route, query, headers: req.headers, body });
  }

  private apiError(e: unknown, method: string, rawPath: string): ApiError {
    if (e instanceof ApiError) return e;
    this.ctx.log?.(`emulator: internal error on ${method} ${rawPath}: ${(e as Error)?.stack ?? String(e)}`);
    return new ApiError("INTERNAL", "Internal error encountered.", { reason: "INTERNAL" });
  }

  /** Malformed HTTP gets a JSON envelope too, then the connection is closed. */
  clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    if (this.refused.has(socket)) {
      // The 403 was the answer; what the client sent after it is not parsed into another.
      socket.end();
      return;
    }
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(invalidArgument(`Malformed HTTP request: ${err.message}`));
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ` +
        `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  async shutdown(server: Server, graceMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    this.stopping.abort();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    server.closeAllConnections();
    await closed;
  }
}

export function createEmulatorServer(
  ctx: EmulatorContext,
  origin: OriginPolicy = { host: "127.0.0.1", allowedHosts: [] },
): EmulatorServer {
  const http = new EmulatorHttp(ctx, origin);
  const server = createServer({ keepAlive: true }, (req, res) => {
    http.inFlight++;
    res.on("close", () => {
      http.inFlight--;
      if (http.inFlight === 0) http.drained?.();
    });
    void http.handle(req, res);
  });
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => http.clientError(err, socket));
  return { server, shutdown: (graceMs = 2000) => http.shutdown(server, graceMs) };
}
