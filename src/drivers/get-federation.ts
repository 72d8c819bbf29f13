import type { Federation, GetFederationResult } from "../generated/schemas.js";
import { objectNameFromArgs } from "./object-args.js";
import type { DataSourceDriver } from "./types.js";

export const getFederation: DataSourceDriver = {
  token: "cloudnative:metastore/v1alpha:getFederation",
  kind: "federation",
  argsSchema: "types/get-federation.schema.json#/definitions/GetFederationArgs",
  resultSchema: "types/get-federation.schema.json#/definitions/GetFederationResult",
  resultNames: [
    "name",
    "createTime",
    "updateTime",
    "labels",
    "version",
    "backendMetastores",
    "backendMetastoreDetails",
    "endpointUri",
    "state",
    "stateMessage",
    "uid",
  ],
  objectName: (args, defaults) => objectNameFromArgs("federation", "federationId", args, defaults),
  async read(cloud, name, signal) {
    return federationResult(await cloud.getFederation(name, signal)) as unknown as Record<string, unknown>;
  },
};

/** The wire federation as the function's result. */
function federationResult(w: Federation): GetFederationResult {
  const details = w.backendMetastores ?? {};
  return {
    name: w.name ?? "",
    createTime: w.createTime ?? "",
    updateTime: w.updateTime ?? "",
    labels: w.labels ?? {},
    version: w.version ?? "",
    backendMetastores: Object.fromEntries(Object.entries(details).map(([rank, b]) => [rank, b.name])),
    backendMetastoreDetails: details,
    endpointUri: w.endpointUri ?? "",
    state: w.state ?? "STATE_UNSPECIFIED",
    stateMessage: w.stateMessage ?? "",
    uid: w.uid ?? "",
  };
}
