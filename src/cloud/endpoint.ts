// Where calls go: the real Google hosts, an explicit http(s) endpoint, or the emulator named by
// CLOUDNATIVE_EMULATOR_HOST (the *_EMULATOR_HOST convention: it wins over everything).

/** The services of the object kinds, and Resource Manager (a project's ID from its number). */
export type Service = "gkebackup" | "aiplatform" | "metastore" | "cloudresourcemanager";

export const EMULATOR_HOST_ENV = "CLOUDNATIVE_EMULATOR_HOST";

export interface ResolvedEndpoint {
  /** "env": CLOUDNATIVE_EMULATOR_HOST; "endpoint": an explicit http(s) URL; "google": the real hosts. */
  source: "env" | "endpoint" | "google";
  /** True for the real Google hosts only; Application Default Credentials are used only then. */
  google: boolean;
  /**
   * Base URL (scheme://host[:port], no trailing slash) for a service; `location` picks the regional aiplatform host.
   */
  baseUrl(service: Service, location?: string): string;
  /** Human-readable description for logs and errors. */
  describe: string;
}

export interface ResolveEndpointOptions {
  /** "google" (default) or "http(s)://host:port[/prefix]". */
  endpoint?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

export class EndpointError extends Error {
  override readonly name = "EndpointError";
}

export function resolveEndpoint(opts: ResolveEndpointOptions = {}): ResolvedEndpoint {
  const env = opts.env ?? process.env;
  const host = env[EMULATOR_HOST_ENV]?.trim();
  if (host) {
    const base = emulatorBase(host);
    return fixed("env", base, `emulator at ${base} (${EMULATOR_HOST_ENV})`);
  }
  const endpoint = opts.endpoint?.trim();
  if (endpoint === undefined || endpoint === "" || endpoint === "google") return google();
  if (/^https?:\/\//i.test(endpoint)) {
    const base = normalizeBase(endpoint, `endpoint "${withoutCredentials(endpoint)}"`);
    return fixed("endpoint", base, `endpoint ${base}`);
  }
  if (endpoint === "embedded") {
    throw new EndpointError(
      `endpoint "embedded" must be started first: pass the embedded ` +
        `emulator's URL (http://127.0.0.1:PORT) as the endpoint`,
    );
  }
  throw new EndpointError(
    `endpoint "${withoutCredentials(endpoint)}" is not valid: expected ` +
      `"google", "embedded" or an http(s)://host:port URL`,
  );
}

/** `url` without the user:password of its authority (for messages, plans and logs). */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#@]*@/i, "$1");
}

/**
 * CLOUDNATIVE_EMULATOR_HOST: host:port, optionally with an http:// or https:// scheme and a path
 * prefix. The port must be given: a bare name would send calls to port 80 of whatever it
 * resolves to. Credentials in it are dropped (and never shown).
 */
function emulatorBase(value: string): string {
  const shown = withoutCredentials(value);
  const bad = (why = "") =>
    new EndpointError(`${EMULATOR_HOST_ENV} "${shown}" is not host:port (e.g. 127.0.0.1:8085)${why}`);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(shown);
  if (scheme && !/^https?$/i.test(scheme[1]!)) throw bad(`: the scheme must be http or https, not ${scheme[1]}`);
  const rest = scheme ? shown.slice(scheme[0].length) : shown;
  if (/[?#]/.test(rest)) throw bad(": it must not have a query or fragment");
  const authority = rest.split("/")[0]!;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(authority);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw bad(authority.includes(":") ? "" : ": the port is missing");
  return normalizeBase(`${scheme ? "" : "http://"}${shown}`, `${EMULATOR_HOST_ENV} "${shown}"`);
}

function normalizeBase(url: string, what: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new EndpointError(`${what} is not a valid URL`);
  }
  if (u.search || u.hash) throw new EndpointError(`${what} must not have a query or fragment`);
  if (!u.hostname) throw new EndpointError(`${what} has no host`);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

function fixed(source: "env" | "endpoint", base: string, describe: string): ResolvedEndpoint {
  return { source, google: false, baseUrl: () => base, describe };
}

const GOOGLE_HOSTS: Record<Service, string> = {
  gkebackup: "https://gkebackup.googleapis.com",
  aiplatform: "https://aiplatform.googleapis.com",
  metastore: "https://metastore.googleapis.com",
  cloudresourcemanager: "https://cloudresourcemanager.googleapis.com",
};

function google(): ResolvedEndpoint {
  return {
    source: "google",
    google: true,
    describe: "Google Cloud",
    baseUrl(service: Service, location?: string): string {
      if (service === "aiplatform") {
        // Vertex AI is regional: {location}-aiplatform.googleapis.com ("global" uses the global host).
        if (!location) throw new EndpointError("aiplatform calls need a location to pick the regional host");
        if (location === "global") return GOOGLE_HOSTS.aiplatform;
        if (!/^[a-z0-9-]+$/.test(location)) throw new EndpointError(`"${location}" is not a valid location`);
        return `https://${location}-aiplatform.googleapis.com`;
      }
      return GOOGLE_HOSTS[service];
    },
  };
}
