// The local cloud emulator: a wire-faithful stand-in for the five Google REST methods converge
// calls (see SPEC section 3) and Cloud Resource Manager's projects.get (./projects-api.ts). Used by
// the quickstart, the end-to-end tests and the benchmarks.
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import type { EmulatorWorld } from "../generated/schemas.js";
import type { EmulatorContext } from "./context.js";
import { Faults } from "./faults.js";
import { loadDataFile, Persister } from "./persist.js";
import { removeTempLeftovers } from "../fs/atomic-file.js";
import { makeDirs, writablePath, type FileRole } from "../state/regular-files.js";
import { checkWorld, coerceSeed, loadSeedFile, WorldError } from "./seed.js";
import { createEmulatorServer } from "./server.js";
import { Stats } from "./stats.js";
import { Store } from "./store.js";

const DATA_FILE: FileRole = {
  what: "emulator data file",
  detail: "The emulator keeps its world in a regular file (or where a symlink to one points): name another with --data.",
};

export interface EmulatorOptions {
  /** Default "127.0.0.1" (loopback unless told otherwise). */
  host?: string;
  /** Default 0 = an ephemeral port. */
  port?: number;
  /** YAML seed (shape of schemas/emulator-seed.schema.json). */
  seedFile?: string;
  /** Or an in-memory seed. */
  seed?: EmulatorWorld;
  /** Persisted world (JSON, same shape); if it exists at start it is loaded instead of the seed. */
  dataFile?: string;
  /** Host names that reach it through a reverse proxy or TLS front (accepted in `Host` with any
   *  port); loopback names and the address it listens on always are. */
  allowedHosts?: readonly string[];
  log?: (line: string) => void;
}

export interface RunningEmulator {
  /** "http://127.0.0.1:PORT" */
  url: string;
  host: string;
  port: number;
  /** "127.0.0.1:PORT" (the CLOUDNATIVE_EMULATOR_HOST form). */
  hostPort: string;
  /** Stops accepting, flushes the data file, closes keep-alive sockets. */
  close(): Promise<void>;
}

export { loadSeedFile, WorldError };
export { METHOD_IDS, type MethodId } from "./routes.js";
export type { FaultConfig } from "./faults.js";

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = opts.host ?? "127.0.0.1";
  const loadSeed = (): EmulatorWorld => {
    if (opts.seedFile) return loadSeedFile(opts.seedFile);
    if (opts.seed) return checkWorld(coerceSeed(structuredClone(opts.seed)), "seed");
    return {};
  };

  let initial: EmulatorWorld | undefined;
  // Written where its symlinks lead; a device, FIFO or directory there is refused, not replaced.
  const dataFile = opts.dataFile ? await writablePath(opts.dataFile, DATA_FILE) : undefined;
  if (dataFile) {
    await makeDirs(dirname(dataFile)); // 0700: the world holds grants
    // Temp files of a writer killed mid-write (dead pids only).
    await removeTempLeftovers(dataFile);
    initial = loadDataFile(dataFile);
  }
  const store = new Store();
  store.load(initial ?? loadSeed());

  const persister = dataFile ? new Persister(dataFile, () => store.serialize(), opts.log) : undefined;
  const ctx: EmulatorContext = {
    store,
    stats: new Stats(),
    faults: new Faults(),
    loadSeed,
    commit: () => (persister ? persister.durable(persister.markDirty()) : undefined),
    closing: false,
    log: opts.log,
  };
  // Write the filled-in world (uids, etags, times) now, so a restart sees the same one.
  await ctx.commit();

  const { server, shutdown } = createEmulatorServer(ctx, { host, allowedHosts: opts.allowedHosts ?? [] });
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException): void => {
      reject(new Error(`cannot listen on ${host}:${opts.port ?? 0}: ${e.code === "EADDRINUSE" ? "address already in use" : e.message}`));
    };
    server.once("error", onError);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostPart}:${port}`,
    host,
    port,
    hostPort: `${hostPart}:${port}`,
    close() {
      closing ??= (async () => {
        ctx.closing = true;
        await shutdown();
        await persister?.flush();
      })();
      return closing;
    },
  };
}
