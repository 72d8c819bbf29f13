// The local cloud emulator: a wire-faithful stand-in for the five Google REST methods converge
// calls (see SPEC section 3) and Cloud Resource Manager's projects.get (./projects-api.ts). Used by
// the quickstart, the end-to-end tests and the benchmarks.
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import type { EmulatorWorld } from "../generated/schemas.js";
import { DEFAULT_PAGE_SIZES, type EmulatorContext, type PageSizes } from "./context.js";
import { Faults } from "./faults.js";
import { loadDataFile, Persister } from "./persist.js";
import { removeTempLeftovers, writeFileAtomic } from "../fs/atomic-file.js";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { makeDirs, writablePath, type FileRole } from "../fs/regular-files.js";
import { checkWorld, coerceSeed, loadSeedFile, WorldError } from "./seed.js";
import { createEmulatorServer } from "./server.js";
import { Stats } from "./stats.js";
import { Store } from "./store.js";

const DATA_FILE: FileRole = {
  what: "emulator data file",
  detail:
    "The emulator keeps its world in a regular file (or where a symlink to one points): name another with --data.",
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
  /** With seedFile and dataFile: when the seed file changed since the world was made from it
   *  (its sha256 is kept beside the world, in `{dataFile}.seed`), start again from the seed. */
  followSeed?: boolean;
  /** Host names that reach it through a reverse proxy or TLS front (accepted in `Host` with any
   *  port); loopback names and the address it listens on always are. */
  allowedHosts?: readonly string[];
  log?: (line: string) => void;
  /** The list methods' default and maximum page sizes (default 50 and 1000). */
  pageSizes?: Partial<PageSizes>;
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
  /** followSeed: the world was made again from the seed, which had changed. */
  reseeded?: boolean;
}

export { loadSeedFile, WorldError };
export { METHOD_IDS, type MethodId } from "./routes.js";
export type { FaultConfig } from "./faults.js";

/** The seed file's sha256, the one recorded beside the world, and whether they differ (a world
 *  recorded without one, from before the seed was followed, counts as made from this seed). */
interface SeedChange {
  digest: string;
  digestFile: string;
  /** A digest is recorded, and it is another seed's. */
  changed: boolean;
  /** The recorded digest is this seed's. */
  current: boolean;
}

async function seedChange(seedFile: string, dataFile: string): Promise<SeedChange> {
  const digest = createHash("sha256")
    .update(await readFile(seedFile))
    .digest("hex");
  const digestFile = `${dataFile}.seed`;
  const recorded = (await readFile(digestFile, "utf8").catch(() => undefined))?.trim();
  return { digest, digestFile, changed: recorded !== undefined && recorded !== digest, current: recorded === digest };
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = opts.host ?? "127.0.0.1";
  const paging = { ...DEFAULT_PAGE_SIZES, ...opts.pageSizes };
  const whole = [paging.defaultSize, paging.maxSize].every((n) => Number.isInteger(n) && n > 0);
  if (!whole || paging.defaultSize > paging.maxSize) {
    throw new Error(`pageSizes: want whole numbers with 0 < defaultSize <= maxSize, got ${JSON.stringify(paging)}`);
  }
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
  const follow = opts.followSeed && opts.seedFile && dataFile ? await seedChange(opts.seedFile, dataFile) : undefined;
  // A world made from another version of the seed is set aside: this one starts from the seed.
  const reseeded = follow?.changed === true && initial !== undefined;
  if (reseeded) initial = undefined;
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
    paging,
  };
  // Write the filled-in world (uids, etags, times) now, so a restart sees the same one.
  await ctx.commit();
  if (follow && !follow.current) await writeFileAtomic(follow.digestFile, `${follow.digest}\n`);

  const { server, shutdown } = createEmulatorServer(ctx, { host, allowedHosts: opts.allowedHosts ?? [] });
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException): void => {
      reject(
        new Error(
          `cannot listen on ${host}:${opts.port ?? 0}: ` +
            `${e.code === "EADDRINUSE" ? "address already in use" : e.message}`,
        ),
      );
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
    ...(reseeded ? { reseeded: true } : {}),
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
