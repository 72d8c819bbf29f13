// `converge-iam/google-native`: the SDK's types in namespaces that follow the seed's tokens
// (cloudnative:backup/v1:RestorePlanIamBinding is backup.v1.RestorePlanIamBinding), with
// @pulumi/google-native's module name for the same API (gkebackup) beside it, and its Provider.
import * as r from "./sdk/resources.js";
import * as f from "./sdk/invokes.js";

export { Provider } from "./sdk/options.js";

export const backup = {
  v1: {
    RestorePlanIamPolicy: r.RestorePlanIamPolicy,
    RestorePlanIamBinding: r.RestorePlanIamBinding,
    RestorePlanIamMember: r.RestorePlanIamMember,
    getRestorePlanIamPolicy: f.getRestorePlanIamPolicy,
    getRestorePlanIamPolicyOutput: f.getRestorePlanIamPolicyOutput,
  },
};
/** @pulumi/google-native's name for the Backup for GKE API. */
export const gkebackup = backup;

export const aiplatform = {
  v1beta1: {
    EndpointIamPolicy: r.EndpointIamPolicy,
    EndpointIamBinding: r.EndpointIamBinding,
    EndpointIamMember: r.EndpointIamMember,
    getEndpointIamPolicy: f.getEndpointIamPolicy,
    getEndpointIamPolicyOutput: f.getEndpointIamPolicyOutput,
  },
};

export const metastore = {
  v1alpha: {
    getFederation: f.getFederation,
    getFederationOutput: f.getFederationOutput,
  },
};
