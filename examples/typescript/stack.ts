// The quickstart (examples/quickstart/stack.yaml) as a program: `converge plan -f stack.ts`.
// It builds the same stack, so its plan is the YAML quickstart's.
import {
  EndpointIamMember,
  RestorePlanIamBinding,
  getFederationOutput,
  interpolate,
  type StackContext,
} from "converge-iam";

export default (stack: StackContext) => {
  stack.name = "quickstart";
  stack.description = "Access to a nightly restore plan and a churn-model endpoint";
  stack.provider = { project: "my-project", location: "us-central1", endpoint: "embedded", seed: "cloud.seed.yaml" };

  // The output form: read at plan time (its arguments are known), like YAML's fn::invoke.
  const lake = getFederationOutput({ federationId: "lake", location: "us-central1" }, { name: "lake" });

  const restoreViewers = new RestorePlanIamBinding("restoreViewers", {
    name: "projects/my-project/locations/us-central1/restorePlans/nightly",
    role: "roles/gkebackup.viewer",
    members: ["group:sre@example.com", "user:alice@example.com"],
  });
  new RestorePlanIamBinding("restoreAdmins", {
    name: "nightly",
    role: "roles/gkebackup.admin",
    members: ["user:oncall@example.com"],
    condition: {
      title: "until-2027",
      description: "Temporary on-call access",
      expression: 'request.time < timestamp("2027-01-01T00:00:00Z")',
    },
  });
  const invoker = new EndpointIamMember(
    "invoker",
    {
      name: "churn",
      role: "roles/aiplatform.user",
      member: interpolate`serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com`,
    },
    { dependsOn: [restoreViewers] },
  );

  stack.export("lakeEndpoint", lake.endpointUri);
  stack.export("invokerId", invoker.id);
};
