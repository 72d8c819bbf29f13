// Which proxy a call goes through, from the environment, the way Terraform (Go's net/http) and
// curl read it: HTTPS_PROXY for https URLs, HTTP_PROXY for http URLs (either case), NO_PROXY
// exceptions, and never a proxy for loopback addresses (the emulator on 127.0.0.1 stays direct).
import { BlockList, isIP } from "node:net";
import { userinfoSecrets } from "./errors.js";

export interface ProxyChoice {
  /** The proxy's URL, credentials included: only for the agent, never printed. */
  url: URL;
  /** scheme://host:port of the proxy, without credentials, for messages. */
  display: string;
}

const env1 = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const v = env[name] ?? env[name.toLowerCase()];
  return v && v.trim() ? v.trim() : undefined;
};

function isLoopback(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1";
  return false;
}

/** Whether NO_PROXY exempts `host` (no brackets) on `port`. */
export function exempt(noProxy: string | undefined, host: string, port: string): boolean {
  if (!noProxy) return false;
  const h = host.toLowerCase().replace(/\.$/, "");
  for (const raw of noProxy.split(",")) {
    let entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return true;
    // CIDR blocks and IP literals (IPv6 may be bracketed; a port may follow).
    const cidr = /^\[?([0-9a-f:.]+)\]?\/(\d{1,3})$/.exec(entry);
    if (cidr && isIP(h)) {
      const family = isIP(cidr[1]!) === 6 ? "ipv6" : "ipv4";
      if (isIP(h) === (family === "ipv6" ? 6 : 4)) {
        const list = new BlockList();
        try {
          list.addSubnet(cidr[1]!, Number(cidr[2]), family);
          if (list.check(h, family)) return true;
        } catch {
          // not a valid block: it matches nothing
        }
      }
      continue;
    }
    let entryPort: string | undefined;
    const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      entry = bracketed[1]!;
      entryPort = bracketed[2];
    } else if (isIP(entry) !== 6) {
      const m = /^(.*):(\d+)$/.exec(entry);
      if (m) {
        entry = m[1]!;
        entryPort = m[2];
      }
    }
    if (entryPort && entryPort !== port) continue;
    // ".example.com" and "*.example.com": subdomains only; "example.com": itself and subdomains.
    if (entry.startsWith("*.")) entry = entry.slice(1);
    if (entry.startsWith(".")) {
      if (h.endsWith(entry)) return true;
    } else if (h === entry || h.endsWith(`.${entry}`)) return true;
  }
  return false;
}

/** The proxy for a request to `target`, or undefined to connect directly. */
export function proxyFor(target: URL, env: NodeJS.ProcessEnv): ProxyChoice | undefined {
  const name = target.protocol === "https:" ? "HTTPS_PROXY" : target.protocol === "http:" ? "HTTP_PROXY" : undefined;
  if (!name) return undefined;
  const value = env1(env, name);
  if (!value) return undefined;
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  if (isLoopback(host) || exempt(env1(env, "NO_PROXY"), host, port)) return undefined;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    // Not echoed: a value that is not a URL cannot be relied on to show where its password is.
    throw new ProxyError(`${name} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ProxyError(`${name} must be an http:// or https:// URL, not ${url.protocol}//`);
  return { url, display: `${url.protocol}//${url.host}` };
}

export class ProxyError extends Error {
  override readonly name = "ProxyError";
}

/** The credentials of the proxies the environment names, in every form an error page may echo
 *  them (see userinfoSecrets): what messages must be scrubbed of. */
export function proxySecrets(env: NodeJS.ProcessEnv): string[] {
  return ["HTTPS_PROXY", "HTTP_PROXY"].flatMap((name) =>
    [...new Set([env[name], env[name.toLowerCase()]])].flatMap((v) => userinfoSecrets(v)),
  );
}

/** Checks the proxy settings that calls to `base` would use; throws a ProxyError when unusable. */
export function checkProxyFor(base: string, env: NodeJS.ProcessEnv): void {
  let target: URL;
  try {
    target = new URL(base);
  } catch {
    return;
  }
  proxyFor(target, env);
}
