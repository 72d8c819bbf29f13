// How each collection's API version shapes its IAM surface, as its discovery document says
// (test/conformance/discovery/): aiplatform v1beta1's Policy has no auditConfigs and its
// SetIamPolicyRequest no updateMask; its testIamPermissions takes `permissions` in the query.
import type { ObjectKind } from "../gcp/object-kinds.js";

export interface IamDialect {
  /** Policy has auditConfigs and SetIamPolicyRequest an updateMask. */
  auditConfigs: boolean;
  /** testIamPermissions takes `permissions` as repeated query parameters, with no body. */
  permissionsInQuery: boolean;
  /** "aiplatform v1beta1", for messages. */
  api: string;
}

export const DIALECTS: Record<ObjectKind, IamDialect> = {
  restorePlan: { auditConfigs: true, permissionsInQuery: false, api: "gkebackup v1" },
  endpoint: { auditConfigs: false, permissionsInQuery: true, api: "aiplatform v1beta1" },
  federation: { auditConfigs: true, permissionsInQuery: false, api: "metastore v1alpha" },
};
