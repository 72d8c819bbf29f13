// Types of ./port.mjs (plain JavaScript: it is preloaded into the compiled CLI).
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { PolicyModification } from "../../src/iam/policy.js";

export function perResourceChunks(mods: PolicyModification[]): PolicyModification[][];
export function perResourcePort(inner: CloudPort, counts: Map<string, number>): CloudPort;
