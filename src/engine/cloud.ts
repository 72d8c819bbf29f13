// Chooses where cloud calls go (SPEC section 3): CLOUDNATIVE_EMULATOR_HOST wins, then the stack's
// provider.endpoint (google | embedded | http://…). `embedded` starts the emulator in-process
// with the stack's seed and keeps its world beside the state file, so consecutive commands see
// the same cloud.
import { join } from "node:path";
import { CloudClient, type CloudEvent } from "../cloud/client.js";
import { isCloudError } from "../cloud/errors.js";
import { modifyPolicy } from "../cloud/policy-engine.js";
import type { ProviderModel } from "../config/model.js";
import type { CloudPort } from "./cloud-port.js";

export interface OpenCloudOptions {
  env?: NodeJS.ProcessEnv;
  /** Directory of the state file (the embedded emulator keeps its world there) */
  stateDir: string;
  stackName: string;
  onEvent?: (e: CloudEvent) => void;
}

export interface OpenCloud {
  port: CloudPort;
  client: CloudClient;
  /** Human description of the target, e.g. "embedded emulator at http://127.0.0.1:41234" */
  target: string;
  close(): Promise<void>;
}

export function embeddedDataFile(stateDir: string, stackName: string): string {
  return join(stateDir, `${stackName}.emulator.json`);
}

export async function openCloud(provider: Pick<ProviderModel, "endpoint" | "seed">, opts: OpenCloudOptions): Promise<OpenCloud> {
  const env = opts.env ?? process.env;
  let endpoint = provider.endpoint;
  let close = async () => {};
  let target: string;
  if (env.CLOUDNATIVE_EMULATOR_HOST) {
    target = `emulator at ${env.CLOUDNATIVE_EMULATOR_HOST} (CLOUDNATIVE_EMULATOR_HOST)`;
  } else if (endpoint === "embedded") {
    const { startEmulator } = await import("../emulator/index.js");
    const emu = await startEmulator({
      ...(provider.seed ? { seedFile: provider.seed } : {}),
      dataFile: embeddedDataFile(opts.stateDir, opts.stackName),
    });
    endpoint = emu.url;
    close = () => emu.close();
    target = `embedded emulator (${emu.url})`;
  } else {
    target = endpoint === "google" ? "Google Cloud" : `emulator at ${endpoint}`;
  }
  const client = new CloudClient({ endpoint, env, ...(opts.onEvent ? { onEvent: opts.onEvent } : {}) });
  const port: CloudPort = {
    async getIamPolicy(kind, name) {
      try {
        return await client.getIamPolicy(kind, name);
      } catch (e) {
        if (isCloudError(e, "NOT_FOUND")) return undefined;
        throw e;
      }
    },
    getFederation: (name) => client.getFederation(name),
    async modifyPolicy(kind, name, mods, initial) {
      const r = await modifyPolicy(client, kind, name, mods, initial ? { initial } : {});
      return { policy: r.policy, written: r.written, attempts: r.attempts };
    },
  };
  return { port, client, target, close };
}
