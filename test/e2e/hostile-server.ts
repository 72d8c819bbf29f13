// A malicious (or just broken) cloud on 127.0.0.1 for the hostile-network tests (issue 12): one
// node:http server per case, whose behaviour is a function of the request. The CLI is pointed at
// it with CLOUDNATIVE_EMULATOR_HOST (or as an HTTP proxy). Behaviours: a correct IAM backend to
// fall back on, fixed answers, bodies too large, slow drips, connection resets, a proxy that
// echoes the credentials it was sent, and a blackhole that accepts connections and never answers.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import type { Policy } from "../../src/generated/schemas.js";

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** Answers one request; `n` counts requests from 1. */
export type Behaviour = (req: IncomingMessage, res: ServerResponse, seen: Seen, n: number) => void | Promise<void>;

export interface HostileServer {
  port: number;
  /** "127.0.0.1:PORT", the CLOUDNATIVE_EMULATOR_HOST form. */
  hostPort: string;
  /** Every request received (CONNECTs included, with method CONNECT). */
  seen: Seen[];
  /** Bytes of response bodies written so far (across requests). */
  bytesSent(): number;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;

/** Starts a server answering every request with `behaviour`. */
export async function startHostile(behaviour: Behaviour): Promise<HostileServer> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  let sent = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s: Seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(s);
      const write = res.write.bind(res);
      res.write = ((chunk: Buffer | string, ...rest: never[]) => {
        sent += Buffer.byteLength(chunk);
        return write(chunk, ...rest);
      }) as typeof res.write;
      void Promise.resolve(behaviour(req, res, s, seen.length)).catch(() => res.destroy());
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
  });
  // CONNECT (HTTPS_PROXY): answered by the behaviour through a minimal response on the raw socket.
  server.on("connect", (req: IncomingMessage, socket: Socket) => {
    const s: Seen = { method: "CONNECT", url: req.url ?? "", headers: req.headers, body: "" };
    seen.push(s);
    const page = echoPage(s).replace(/<title>.*<\/title>/, "");
    socket.end(
      `HTTP/1.1 407 Proxy Authentication Required\r\nContent-Type: text/html\r\nContent-Length: ` +
        `${Buffer.byteLength(page)}\r\nConnection: close\r\n\r\n${page}`,
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hostPort: `127.0.0.1:${port}`,
    seen,
    bytesSent: () => sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A TCP server that accepts connections and never says a word. */
export async function startBlackhole(): Promise<{ hostPort: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: NetServer = createNetServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    hostPort: `127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A port nobody listens on (bound then released): connections are refused. */
export async function deadPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

export function reply(status: number, body: unknown, headers: Record<string, string> = {}): Behaviour {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return (_req, res) => {
    res.writeHead(status, {
      "Content-Type": "application/json",
      "Content-Length": Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };
}

/** Google's error envelope. */
export function googleError(
  code: number,
  status: string,
  message: string,
  headers: Record<string, string> = {},
): Behaviour {
  return reply(code, { error: { code, message, status } }, headers);
}

/** The n-th request gets steps[n-1] (the last one repeats). */
export function steps(...list: Behaviour[]): Behaviour {
  return (req, res, seen, n) => list[Math.min(n, list.length) - 1]!(req, res, seen, n);
}

/** getIamPolicy requests get `read`, everything else `rest`. */
export function onRead(read: Behaviour, rest: Behaviour): Behaviour {
  return (req, res, seen, n) => (seen.url.includes(":getIamPolicy") ? read : rest)(req, res, seen, n);
}

/** A 200 whose body never stops: `declared` sends a Content-Length of 64 MiB up front. */
export function hugeBody(declared: boolean): Behaviour {
  return (_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json", ...(declared ? { "Content-Length": 64 * MiB } : {}) });
    const chunk = Buffer.alloc(MiB, " ");
    res.write('{"bindings": [], "etag": "');
    const pump = (): void => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once("drain", pump);
    };
    res.on("close", () => res.removeAllListeners("drain"));
    pump();
  };
}

/** Headers at once, then one byte a second, forever (until the client goes away). */
export function slowDrip(): Behaviour {
  return (_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": 1000 });
    const timer = setInterval(() => res.write(" "), 1000);
    res.on("close", () => clearInterval(timer));
  };
}

/** Cuts the connection without an answer. */
export const reset: Behaviour = (req) => {
  req.socket.destroy();
};

/** A proxy's error page that echoes the request headers, Proxy-Authorization included. */
export function echoPage(s: Seen): string {
  const lines = Object.entries(s.headers).map(([k, v]) => `${k}: ${String(v)}`);
  return (
    `<html><head><title>502 Bad Gateway</title></head><body><pre>Request for ` +
    `${s.url} refused.\n${lines.join("\n")}</pre></body></html>`
  );
}

export const echoHeaders: Behaviour = (_req, res, seen) => {
  // The message converge prints comes from a JSON envelope when there is one: echo there too.
  const body = JSON.stringify({
    error: { code: 502, status: "UNAVAILABLE", message: `proxy refused: ${echoPage(seen)}` },
  });
  res.writeHead(502, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
};

/**
 * A correct IAM backend for every restore plan and endpoint it is asked about: policies start as
 * `initial`, setIamPolicy checks the etag (409 ABORTED when stale) and bumps it.
 */
export function iamBackend(
  initial: Policy = { version: 1, bindings: [] },
): Behaviour & { policies: Map<string, Policy>; writes: () => number } {
  const policies = new Map<string, Policy>();
  let writes = 0;
  let etag = 0;
  const get = (name: string): Policy => policies.get(name) ?? { ...structuredClone(initial), etag: `e${etag}` };
  const b: Behaviour = (_req, res, seen) => {
    const m = /^\/v1(?:beta1)?\/(projects\/[^:?]+):(getIamPolicy|setIamPolicy)/.exec(seen.url);
    if (!m) return googleError(404, "NOT_FOUND", `no such method ${seen.url}`)(_req, res, seen, 0);
    const [, name, verb] = m as unknown as [string, string, string];
    if (verb === "getIamPolicy") return reply(200, get(name))(_req, res, seen, 0);
    const next = (JSON.parse(seen.body) as { policy: Policy }).policy;
    if (next.etag !== get(name).etag) return googleError(409, "ABORTED", "etag mismatch")(_req, res, seen, 0);
    writes++;
    const stored = { ...next, etag: `e${++etag}` };
    policies.set(name, stored);
    return reply(200, stored)(_req, res, seen, 0);
  };
  return Object.assign(b, { policies, writes: () => writes });
}
