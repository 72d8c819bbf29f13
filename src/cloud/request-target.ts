// Where one request goes, as http.request's options, without a URL object per request: the
// origin (scheme, host, port, credentials) is parsed once and kept; the path is taken verbatim
// when WHATWG URL parsing could not change it (the paths the client builds), else the whole URL
// is parsed as before. Same options as `urlToHttpOptions(new URL(url))` (test/cloud/request-target.test.ts).
import { urlToHttpOptions } from "node:url";
import type { RequestOptions } from "node:http";

/** What http.request reads of `urlToHttpOptions(new URL(url))`. */
export interface TargetOptions extends RequestOptions {
  protocol: string;
  path: string;
  pathname?: string;
  search?: string;
  hash?: string;
  href?: string;
}

/** Paths URL parsing keeps as they are: no dot segments (even encoded), no backslash, no
 *  fragment, no character it percent-encodes, no empty query. */
const VERBATIM_PATH = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
const DOT_SEGMENT = /\/\.|%2e/i;

/** The origin part of `url` (up to the path), or undefined when it is not plainly separable. */
function originOf(url: string): string | undefined {
  const scheme = url.indexOf("://");
  if (scheme < 0) return undefined;
  const slash = url.indexOf("/", scheme + 3);
  if (slash < 0) return undefined;
  const origin = url.slice(0, slash);
  return /[\\?#\s]/.test(origin) ? undefined : origin;
}

function verbatimPath(path: string): boolean {
  return VERBATIM_PATH.test(path) && !DOT_SEGMENT.test(path) && !path.endsWith("?");
}

/** The options of full URL parsing: what every other URL gets. */
function parsedTarget(url: string): { target: URL; options: TargetOptions } {
  const target = new URL(url);
  return { target, options: urlToHttpOptions(target) as TargetOptions };
}

export class TargetCache {
  private readonly origins = new Map<string, { target: URL; options: TargetOptions }>();

  /** http.request's options for `url`, and the URL of its origin (for the proxy choice). */
  resolve(url: string): { target: URL; options: TargetOptions } {
    const origin = originOf(url);
    const path = origin === undefined ? undefined : url.slice(origin.length);
    if (origin === undefined || path === undefined || !verbatimPath(path)) return parsedTarget(url);
    let known = this.origins.get(origin);
    if (!known) {
      known = parsedTarget(`${origin}/`);
      this.origins.set(origin, known);
    }
    const q = path.indexOf("?");
    const o = known.options;
    const options: TargetOptions = {
      protocol: o.protocol,
      hostname: o.hostname,
      hash: "",
      search: q < 0 ? "" : path.slice(q),
      pathname: q < 0 ? path : path.slice(0, q),
      path,
      href: o.href!.slice(0, -1) + path,
    };
    if (o.port !== undefined) options.port = o.port;
    if (o.auth !== undefined) options.auth = o.auth;
    return { target: known.target, options };
  }
}
