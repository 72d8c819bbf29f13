// Access tokens for cloud calls. Tokens are secrets: they go into the Authorization header and
// nowhere else (never into messages, errors, events, state or logs).
import { redact } from "./errors.js";

const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const TOKEN_ENV_VARS = ["CLOUDNATIVE_ACCESS_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN"] as const;

export interface TokenProvider {
  /** The bearer token to send, or undefined to send no Authorization header. */
  getToken(): Promise<string | undefined>;
  /** Where tokens come from, for diagnostics (never the token itself). */
  readonly source: "env:CLOUDNATIVE_ACCESS_TOKEN" | "env:GOOGLE_OAUTH_ACCESS_TOKEN" | "adc" | "none";
  /** Tokens handed out so far, so that error text can be scrubbed of them. */
  secrets(): readonly string[];
  /** True when getToken resolves at once, always to the same value (a token from the environment, or none). */
  readonly fixed?: boolean;
  /** The error every later getToken will give, once that is known (no credentials were found):
   *  a call can then fail before it waits for anything. */
  failure?(): AuthError | undefined;
}

/** The part of google-auth-library's GoogleAuth we use; injectable for tests. */
export interface AccessTokenSource {
  getAccessToken(): Promise<string | null | undefined>;
}

export interface TokenProviderOptions {
  env?: NodeJS.ProcessEnv;
  /** True when talking to the real Google hosts: only then are Application Default Credentials used. */
  google: boolean;
  /** Creates the ADC source; defaults to `new GoogleAuth({ scopes: [cloud-platform] })`, loaded lazily. */
  createAdc?: () => AccessTokenSource | Promise<AccessTokenSource>;
}

/** Raised when no credentials can be found or a token cannot be obtained. */
export class AuthError extends Error {
  override readonly name = "AuthError";
}

/**
 * Precedence: CLOUDNATIVE_ACCESS_TOKEN, then GOOGLE_OAUTH_ACCESS_TOKEN; otherwise, for real Google
 * only, Application Default Credentials (created on first use); for an emulator or an explicit
 * endpoint with no token in the environment, no Authorization header at all.
 */
export function createTokenProvider(opts: TokenProviderOptions): TokenProvider {
  const env = opts.env ?? process.env;
  for (const name of TOKEN_ENV_VARS) {
    const token = env[name]?.trim();
    if (token) {
      return { source: `env:${name}`, getToken: async () => token, secrets: () => [token], fixed: true };
    }
  }
  if (!opts.google) return { source: "none", getToken: async () => undefined, secrets: () => [], fixed: true };

  const create = opts.createAdc ?? defaultAdc;
  let adc: Promise<AccessTokenSource> | undefined;
  const seen = new Set<string>();
  const fetchToken = async (): Promise<string> => {
    adc ??= Promise.resolve().then(create);
    let token: string | null | undefined;
    try {
      token = await (await adc).getAccessToken();
    } catch (e) {
      // The library's messages do not carry tokens, but scrub the ones we know anyway.
      const msg = redact(e instanceof Error ? e.message : String(e), [...seen]);
      throw new AuthError(
        `could not get Google Cloud credentials (Application Default ` +
          `Credentials): ${msg.split("\n")[0]!.replace(new RegExp(String.raw`\.+$`), "")}. ` +
          `Run \`gcloud auth application-default login\`, set ` +
          `GOOGLE_APPLICATION_CREDENTIALS, or set CLOUDNATIVE_ACCESS_TOKEN`,
      );
    }
    if (!token) throw new AuthError("Application Default Credentials returned no access token");
    seen.add(token);
    return token;
  };
  // The library searches for credentials afresh on every call until one succeeds (files, the
  // environment, the metadata server): the first search is shared by the calls made meanwhile,
  // and if it fails, its error stands for the process. Once a token came, each call asks the
  // library (which caches and refreshes it), and a failed refresh is that call's alone.
  let first: Promise<string> | undefined;
  let found = false;
  let failed: AuthError | undefined;
  return {
    source: "adc",
    secrets: () => [...seen],
    failure: () => failed,
    getToken(): Promise<string> {
      if (found) return fetchToken();
      first ??= fetchToken().then(
        (token) => {
          found = true;
          return token;
        },
        (e: unknown) => {
          if (e instanceof AuthError) failed = e;
          throw e;
        },
      );
      return first;
    },
  };
}

async function defaultAdc(): Promise<AccessTokenSource> {
  silenceMetadataLookupWarnings();
  const { GoogleAuth } = await import("google-auth-library");
  return new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
}

let silenced = false;

/**
 * gcp-metadata, probing for a GCE metadata server, emits a process warning
 * ("MetadataLookupWarning: received unexpected error …", plus Node's "--trace-warnings" hint) when
 * the probe fails oddly off Google Cloud. It says nothing the user can act on: when there are no
 * credentials, the AuthError above says what to do. Every other warning still goes out.
 */
function silenceMetadataLookupWarnings(): void {
  if (silenced) return;
  silenced = true;
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const option = rest[0];
    const type = typeof option === "string" ? option : (option as { type?: unknown } | undefined)?.type;
    if (type === "MetadataLookupWarning" || (warning instanceof Error && warning.name === "MetadataLookupWarning"))
      return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
