// Chooses where cloud calls go (SPEC section 3): CLOUDNATIVE_EMULATOR_HOST wins, then the stack's
// provider.endpoint (google | embedded | http://…). `embedded` starts the emulator in-process
// with the stack's seed and keeps its world beside the state file, so consecutive commands see
// the same cloud.
import { lstat, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { CloudClient, type CloudEvent } from "../cloud/client.js";
import { EndpointError, withoutCredentials } from "../cloud/endpoint.js";
import { isCloudError } from "../cloud/errors.js";
import type { RateTable } from "../cloud/rate-limit.js";
import { ProxyError } from "../cloud/proxy.js";
import { error, UserError } from "../diagnostics/diagnostic.js";
import { modifyPolicy } from "../cloud/policy-engine.js";
import type { ProviderModel } from "../config/model.js";
import type { CloudPort } from "../contracts/cloud-port.js";
import { type Emit, type EngineEvent, noEmit } from "../contracts/events.js";
import { debugLogger } from "./debug-log.js";
import { fsError } from "../fs/errors.js";
import { makeDirs } from "../fs/regular-files.js";

export interface OpenCloudOptions {
  env?: NodeJS.ProcessEnv;
  /** Directory of the state file (the embedded emulator keeps its world there) */
  stateDir: string;
  stackName: string;
  /** Where retries go as engine events; can be changed later with `route`. */
  emit?: Emit;
  /** Total deadline of each cloud call, retries included (ms); default 2 minutes. */
  callTimeoutMs?: number;
  /** Requests per minute by service (--rate), over the client's defaults. */
  rates?: RateTable;
}

export interface OpenCloud {
  port: CloudPort;
  client: CloudClient;
  /** Human description of the target, e.g. "embedded emulator at http://127.0.0.1:41234" */
  target: string;
  /** Sends the cloud's engine events (retries) to `emit` from now on. */
  route(emit: Emit): void;
  close(): Promise<void>;
}

/** The engine's view of a cloud client event: only what will be tried again is news. */
export function retryEvent(e: CloudEvent): EngineEvent | undefined {
  if (e.type === "attempt" && e.retry) {
    return {
      type: "retry",
      resource: e.resource,
      call: e.methodId.slice(e.methodId.lastIndexOf(".") + 1),
      status: e.status,
      httpStatus: e.httpStatus,
      attempt: e.attempt,
      maxAttempts: e.maxAttempts,
      delayMs: Math.round(e.delayMs ?? 0),
      reason: "transient",
    };
  }
  if (e.type === "policy" && e.outcome === "aborted" && e.delayMs !== undefined) {
    return {
      type: "retry",
      resource: e.resource,
      call: "setIamPolicy",
      status: "ABORTED",
      httpStatus: 409,
      attempt: e.round,
      maxAttempts: e.maxRounds,
      delayMs: Math.round(e.delayMs),
      reason: "etag-conflict",
    };
  }
  return undefined;
}

/**
 * The embedded emulator's world: {state dir}/{stack}.emulator.world, a name no file of a state can
 * have (those end in .json, .backup, .lock, .intents, .cas, .moving, .workspace or .workspaces),
 * whatever the stack and workspace names. It was {stack}.emulator.json, the state file of workspace
 * "emulator" (and of a stack named {stack}.emulator): a world found there is moved, a state is left.
 */
async function embeddedDataFile(stateDir: string, stackName: string): Promise<string> {
  const file = join(stateDir, `${stackName}.emulator.world`);
  const legacy = join(stateDir, `${stackName}.emulator.json`);
  const regular = (path: string) =>
    lstat(path).then(
      (st) => st.isFile(),
      () => false,
    );
  if (
    (await lstat(file).then(
      () => true,
      () => false,
    )) ||
    !(await regular(legacy))
  )
    return file;
  const text = await readFile(legacy, "utf8").catch(() => "");
  if (!/"lineage"\s*:/.test(text) || !/"resources"\s*:/.test(text)) {
    const failed = (e: unknown) => Promise.reject(fsError(e, "move the emulator's world", legacy));
    await rename(legacy, file).catch(failed);
  }
  return file;
}

/** An endpoint URL for people to read: scheme, host and port only (never credentials or a path). */
function describeEndpoint(endpoint: string): string {
  try {
    return new URL(endpoint).host || endpoint;
  } catch {
    return "an invalid endpoint";
  }
}

export async function openCloud(
  provider: Pick<ProviderModel, "endpoint" | "seed" | "project">,
  opts: OpenCloudOptions,
): Promise<OpenCloud> {
  const env = opts.env ?? process.env;
  // First: a log path it refuses must not leave an embedded emulator running (the process would hang).
  const log = debugLogger(env);
  let endpoint = provider.endpoint;
  let close = async () => {};
  let target: string;
  if (env.CLOUDNATIVE_EMULATOR_HOST) {
    target = `emulator at ${withoutCredentials(env.CLOUDNATIVE_EMULATOR_HOST)} (from CLOUDNATIVE_EMULATOR_HOST)`;
  } else if (endpoint === "embedded") {
    // The world file sits beside the state: the state directory is made here as the store makes it (0700).
    try {
      await makeDirs(opts.stateDir);
    } catch (e) {
      throw fsError(e, "create directory", opts.stateDir);
    }
    const emu = await startEmbedded(provider.seed, await embeddedDataFile(opts.stateDir, opts.stackName));
    endpoint = emu.url;
    close = () => emu.close();
    target = "embedded emulator";
    if (emu.reseeded) target += " (started again from its seed, which changed since the last command)";
  } else {
    target =
      endpoint === "google"
        ? `Google APIs${provider.project ? ` (project ${provider.project})` : ""}`
        : `emulator at ${describeEndpoint(endpoint)}`;
  }
  let emit = opts.emit ?? noEmit;
  const onEvent = (e: CloudEvent) => {
    log?.(e);
    const event = retryEvent(e);
    if (event) emit(event);
  };
  let client: CloudClient;
  try {
    client = new CloudClient({
      endpoint,
      env,
      onEvent,
      ...(opts.callTimeoutMs !== undefined ? { callTimeoutMs: opts.callTimeoutMs } : {}),
      ...(opts.rates ? { rates: opts.rates } : {}),
    });
  } catch (e) {
    await close();
    // A malformed CLOUDNATIVE_EMULATOR_HOST, endpoint or proxy setting: the user's to fix.
    if (e instanceof EndpointError || e instanceof ProxyError) throw new UserError(error(e.message));
    throw e;
  }
  const port: CloudPort = {
    async getIamPolicy(kind, name, signal) {
      try {
        return await client.getIamPolicy(kind, name, signal ? { signal } : {});
      } catch (e) {
        if (isCloudError(e, "NOT_FOUND")) return undefined;
        throw e;
      }
    },
    getFederation: (name, signal) => client.getFederation(name, signal ? { signal } : {}),
    getProject: (project, signal) => client.getProject(project, signal ? { signal } : {}),
    listObjects: (kind, project, location, signal) =>
      client.listObjects(kind, project, location, signal ? { signal } : {}),
    listLocations: (kind, project, signal) => client.listLocations(kind, project, signal ? { signal } : {}),
    async modifyPolicy(kind, name, mods, initial, signal, planned) {
      const r = await modifyPolicy(client, kind, name, mods, {
        ...(initial ? { initial } : {}),
        ...(signal ? { signal } : {}),
        ...(planned ? { planned } : {}),
      });
      return { policy: r.policy, written: r.written, attempts: r.attempts };
    },
  };
  return { port, client, target, route: (next) => (emit = next), close };
}

/** Starts the embedded emulator; a seed or data file it cannot use is a diagnostic at its line. */
async function startEmbedded(seed: string | undefined, dataFile: string) {
  const { startEmulator, WorldError } = await import("../emulator/index.js");
  try {
    return await startEmulator({ ...(seed ? { seedFile: seed } : {}), dataFile, followSeed: true });
  } catch (e) {
    if (!(e instanceof WorldError)) throw e;
    const { file, line, column } = e.position;
    if (!file) throw new UserError(error(e.message));
    throw new UserError(error(e.problem, { file, ...(line ? { line } : {}), ...(column ? { column } : {}) }));
  }
}
