// Who may talk to the emulator: it serves any process on the machine (converge, the Google client
// libraries, curl), but no web page. A page that reaches it by DNS rebinding sends its own host
// name in `Host`; a cross-origin request from a page sends an `Origin`. Both are refused, on the
// admin API (reset, faults, world) and the services alike.
import type { IncomingHttpHeaders } from "node:http";

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"]);

export interface OriginPolicy {
  /** The address the emulator listens on, as given ("127.0.0.1", "0.0.0.0", "::", a name). */
  host: string;
  /**
   * Host names the operator says are the emulator's (a reverse proxy or TLS front in front of it): accepted with any
   * port.
   */
  allowedHosts: readonly string[];
}

/** host and port of a Host header value; the host lower-cased, without brackets or a final dot. */
function splitHost(value: string): { host: string; port: string | undefined } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) return undefined;
  return { host: (m[1] ?? m[2]!).toLowerCase().replace(/\.$/, ""), port: m[3] };
}

/** An IP as the socket reports it, comparable with a Host header's (IPv4-mapped IPv6 unwrapped). */
function plainIp(address: string | undefined): string | undefined {
  if (!address) return undefined;
  return address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1");
}

/**
 * Why a request must be refused (403), or undefined to serve it. `localPort` and `localAddress`
 * are the socket's: the port the emulator listens on and the address the request arrived at.
 */
export function foreignRequest(
  headers: IncomingHttpHeaders,
  local: { port: number | undefined; address: string | undefined },
  policy: OriginPolicy,
): string | undefined {
  const hostHeader = headers.host;
  if (!hostHeader) return "Requests must carry a Host header naming the emulator.";
  const parsed = splitHost(hostHeader);
  const shown = JSON.stringify(hostHeader.slice(0, 100));
  if (!parsed) return `Host ${shown} is not host:port.`;
  const allowed = policy.allowedHosts.some((h) => h.toLowerCase().replace(/^\[|\]$/g, "") === parsed.host);
  if (!allowed) {
    const own = new Set([...LOOPBACK_NAMES, policy.host.toLowerCase().replace(/^\[|\]$/g, "")]);
    const address = plainIp(local.address);
    if (address) own.add(address);
    if (!own.has(parsed.host) || parsed.port !== String(local.port)) {
      return (
        `Host ${shown} is not this emulator's address (a loopback name or the address it listens on, with ` +
        `port ${local.port}); refused so that no web page can reach it by DNS rebinding.`
      );
    }
  }
  const origin = headers.origin;
  if (origin !== undefined && origin !== `http://${hostHeader}` && origin !== `https://${hostHeader}`) {
    return (
      `Origin ${JSON.stringify(String(origin).slice(0, 100))} is not this emulator's ` +
      `own: cross-origin requests from web pages are refused.`
    );
  }
  return undefined;
}
