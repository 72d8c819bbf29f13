// Dataproc Metastore federations: realistic defaults for what a seed leaves out, and the wire
// shape of metastore.projects.locations.federations.get.
import { createHash } from "node:crypto";
import type { EmulatorFederation } from "../generated/schemas.js";

const DEFAULT_FEDERATION_VERSION = "3.1.2";

const STATES = ["STATE_UNSPECIFIED", "CREATING", "ACTIVE", "UPDATING", "DELETING", "ERROR"];
const METASTORE_TYPES = ["METASTORE_TYPE_UNSPECIFIED", "DATAPLEX", "BIGQUERY", "DATAPROC_METASTORE"];

function digest(name: string): Buffer {
  return createHash("sha256").update(name).digest();
}

/**
 * A UUID derived from the name, so a seed without uids gives the same uids on every start and
 * reset (the filled value is persisted as well).
 */
function uidFor(name: string): string {
  const h = digest(`uid:${name}`).subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x40; // RFC 4122 version 4 layout
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Fills every field the real API always returns; `name` must already be canonical. */
export function fillFederation(f: EmulatorFederation, now: string): EmulatorFederation {
  const h = digest(`endpoint:${f.name}`);
  const createTime = f.createTime ?? f.updateTime ?? now;
  return {
    name: f.name,
    createTime,
    updateTime: f.updateTime ?? createTime,
    labels: f.labels ?? {},
    version: f.version ?? DEFAULT_FEDERATION_VERSION,
    backendMetastores: f.backendMetastores ?? {},
    endpointUri: f.endpointUri ?? `thrift://10.${h[0]}.${h[1]}.${(h[2]! % 254) + 1}:9083`,
    state: f.state ?? "ACTIVE",
    stateMessage: f.stateMessage ?? "",
    uid: f.uid ?? uidFor(f.name),
  };
}

/**
 * The GET response. The real API names the project by number when it has one, whatever form the
 * request used; enums are numbers when the client asked for `enum-encoding=int`. Empty fields
 * (no labels, no backends, no state message) are omitted, as proto3 JSON prints them.
 */
export function renderFederation(f: EmulatorFederation, projectNumber: string | undefined, intEnums: boolean): string {
  let name = f.name;
  if (projectNumber) name = `projects/${projectNumber}/${f.name.split("/").slice(2).join("/")}`;
  const backends: Record<string, unknown> = {};
  for (const [rank, b] of Object.entries(f.backendMetastores ?? {})) {
    backends[rank] = {
      name: b.name,
      metastoreType: intEnums ? METASTORE_TYPES.indexOf(b.metastoreType) : b.metastoreType,
    };
  }
  const wire: Record<string, unknown> = { name, createTime: f.createTime, updateTime: f.updateTime };
  if (Object.keys(f.labels ?? {}).length > 0) wire.labels = f.labels;
  wire.version = f.version;
  if (Object.keys(backends).length > 0) wire.backendMetastores = backends;
  wire.endpointUri = f.endpointUri;
  wire.state = intEnums ? STATES.indexOf(f.state ?? "STATE_UNSPECIFIED") : f.state;
  if (f.stateMessage) wire.stateMessage = f.stateMessage;
  wire.uid = f.uid;
  return JSON.stringify(wire);
}
