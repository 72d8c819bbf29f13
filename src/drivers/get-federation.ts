import type { Federation, GetFederationResult } from "../generated/schemas.js";
import { formatName, SEGMENT } from "../cloud/names.js";
import type { DataSourceDriver } from "./types.js";

export const getFederation: DataSourceDriver = {
  token: "cloudnative:metastore/v1alpha:getFederation",
  kind: "federation",
  argsSchema: "types/get-federation.schema.json#/definitions/GetFederationArgs",
  resultSchema: "types/get-federation.schema.json#/definitions/GetFederationResult",
  resultNames: ["name", "createTime", "updateTime", "labels", "version", "backendMetastores", "backendMetastoreDetails", "endpointUri", "state", "stateMessage", "uid"],
  objectName(args, defaults) {
    const project = (args.project as string | undefined) ?? defaults.project;
    if (!project) return { problem: { path: ["project"], message: "project is not set and provider.project has no default" } };
    for (const [key, v] of [["federationId", args.federationId], ["location", args.location], ["project", project]] as const) {
      if (typeof v !== "string" || !SEGMENT.test(v)) return { problem: { path: [key], message: `${key} "${String(v)}" is not a valid identifier` } };
    }
    return { name: formatName(getFederation.kind, project, args.location as string, args.federationId as string) };
  },
  toResult(w: Federation): GetFederationResult {
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
  },
};
