// What the emulator-backed tests of every folder share, so that each folder does not spell it
// again: one emulator per file, its method IDs, the seeded "lake" federation, lenient JSON parsing.
import { afterAll, beforeAll } from "vitest";
import { startEmulator, type EmulatorOptions, type RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld } from "../../src/generated/schemas.js";

/** Method IDs, as the emulator counts requests and responses in its stats. */
export const GET_RP = "gkebackup.projects.locations.restorePlans.getIamPolicy";
export const SET_RP = "gkebackup.projects.locations.restorePlans.setIamPolicy";
export const GET_EP = "aiplatform.projects.locations.endpoints.getIamPolicy";
export const SET_EP = "aiplatform.projects.locations.endpoints.setIamPolicy";
export const GET_FED = "metastore.projects.locations.federations.get";

type SeedFederation = NonNullable<EmulatorWorld["federations"]>[number];

/** The seeded lake federation: owner data-eng, a hive backend in `project`. */
export function lakeFederation(name: string, project: string): SeedFederation {
  return {
    name,
    version: "3.1.2",
    state: "ACTIVE",
    labels: { owner: "data-eng" },
    endpointUri: "thrift://10.0.0.7:9083",
    backendMetastores: {
      "1": { name: `projects/${project}/locations/us-central1/services/hive`, metastoreType: "DATAPROC_METASTORE" },
    },
  };
}

/** The text as JSON, or undefined when it is not JSON (error answers need not be). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One emulator for the whole test file: started in beforeAll, closed in afterAll. The returned
 * object reads through to it, so tests use `emu.url` as they would a variable set in beforeAll.
 */
export function useFileEmulator(opts: EmulatorOptions): RunningEmulator {
  let emu: RunningEmulator | undefined;
  const running = (): RunningEmulator => {
    if (!emu) throw new Error("the emulator starts in beforeAll");
    return emu;
  };
  beforeAll(async () => {
    emu = await startEmulator(opts);
  });
  afterAll(async () => {
    await emu?.close();
  });
  return {
    get url() {
      return running().url;
    },
    get host() {
      return running().host;
    },
    get port() {
      return running().port;
    },
    get hostPort() {
      return running().hostPort;
    },
    close: () => running().close(),
  };
}
