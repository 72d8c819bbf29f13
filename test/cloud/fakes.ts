// Test fakes built from plain functions: a recording fetch and a tiny in-memory IAM policy store.
import type { Policy } from "../../src/generated/schemas.js";

export interface Recorded {
  method: string;
  url: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, body, headers };
}

export function googleError(code: number, status: string | undefined, message: string, details: unknown[] = []): Reply {
  return { status: code, body: { error: { code, message, ...(status ? { status } : {}), details } } };
}

export function networkError(code: string, message = `read ${code}`): Error {
  return Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(message), { code }) });
}

/** A fetch that records every request and answers from `handler` (a function or a script of replies). */
export function fakeFetch(
  handler: ((r: Recorded, signal: AbortSignal | undefined) => Reply | Promise<Reply>) | Reply[],
) {
  const calls: Recorded[] = [];
  const script = Array.isArray(handler) ? [...handler] : undefined;
  const fn = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input);
    const u = new URL(url);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    const rec: Recorded = {
      method: init?.method ?? "GET",
      url,
      path: u.pathname,
      query: u.search,
      headers,
      body: typeof init?.body === "string" ? init.body : undefined,
    };
    calls.push(rec);
    const reply = script
      ? (script.shift() ?? new Error("fake fetch: script exhausted"))
      : await (handler as Exclude<typeof handler, Reply[]>)(rec, init?.signal ?? undefined);
    if (reply instanceof Error) throw reply;
    const text =
      reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
    return new Response(text, {
      status: reply.status,
      headers: { "content-type": "application/json", ...(reply.headers ?? {}) },
    });
  }) as typeof fetch;
  return Object.assign(fn, { calls });
}

export function recordingSleep() {
  const delays: number[] = [];
  const sleep = async (ms: number) => {
    delays.push(ms);
  };
  return { delays, sleep };
}

/**
 * An in-memory policy store speaking the getIamPolicy/setIamPolicy wire protocol: etags change on
 * every write, a stale etag gets 409 ABORTED. `beforeSet` can interfere (simulate another writer).
 */
export class FakePolicyServer {
  policies = new Map<string, Policy>();
  gets = 0;
  sets = 0;
  private counter = 0;
  beforeSet:
    ((name: string, body: { policy: Policy; updateMask?: string }) => Reply | void | Promise<Reply | void>) | undefined;
  beforeGet: ((name: string) => Reply | void | Promise<Reply | void>) | undefined;
  /**
   * After a write was committed: an answer that replaces the success (a lost answer: a 5xx, or an Error for a reset).
   */
  afterSet: ((name: string) => Reply | void) | undefined;
  readonly setBodies: { policy: Policy; updateMask?: string }[] = [];

  put(name: string, policy: Omit<Policy, "etag">): void {
    this.policies.set(name, { ...structuredClone(policy), etag: this.nextEtag() });
  }

  /** Simulates a write by someone else: changes the policy and its etag. */
  mutate(name: string, f: (p: Policy) => void): void {
    const p = structuredClone(this.policies.get(name)!);
    f(p);
    p.etag = this.nextEtag();
    this.policies.set(name, p);
  }

  nextEtag(): string {
    return Buffer.from(`etag-${++this.counter}`).toString("base64");
  }

  readonly fetch = fakeFetch(async (r) => {
    const m = /^\/(v1|v1beta1)\/(.+):(getIamPolicy|setIamPolicy)$/.exec(r.path);
    if (!m) return googleError(404, "NOT_FOUND", `no route ${r.path}`);
    const name = m[2]!;
    const current = this.policies.get(name);
    if (!current) return googleError(404, "NOT_FOUND", `Resource "${name}" was not found`);
    if (m[3] === "getIamPolicy") {
      this.gets++;
      const injected = await this.beforeGet?.(name);
      if (injected) return injected;
      return json(200, this.policies.get(name));
    }
    this.sets++;
    const body = JSON.parse(r.body ?? "{}") as { policy: Policy; updateMask?: string };
    this.setBodies.push(structuredClone(body));
    const injected = await this.beforeSet?.(name, body);
    if (injected) return injected;
    const now = this.policies.get(name)!;
    if (body.policy.etag !== undefined && body.policy.etag !== now.etag) {
      return googleError(
        409,
        "ABORTED",
        "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
      );
    }
    // Honour the mask like Google does: only bindings (and the etag check) come from the body.
    const next: Policy = { ...now, bindings: body.policy.bindings ?? [], etag: this.nextEtag() };
    if (body.policy.version !== undefined) next.version = body.policy.version;
    this.policies.set(name, next);
    return this.afterSet?.(name) ?? json(200, next);
  });
}
