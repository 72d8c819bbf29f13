// A converge stack as a TypeScript program: the IAM grants this repository declares.
// `npx converge plan -f stack.ts` shows what `npx converge apply -f stack.ts` would change. It runs
// against the embedded emulator, seeded from cloud.seed.yaml, so it needs no Google account: to
// manage real Google Cloud, set your project below and delete `endpoint` and `seed`.
import { EndpointIamMember, RestorePlanIamBinding, type StackContext } from "converge-iam";

export default (stack: StackContext) => {
  stack.name = "{{name}}";
  stack.provider = { project: "my-project", location: "us-central1", endpoint: "embedded", seed: "cloud.seed.yaml" };

  new RestorePlanIamBinding("restoreViewers", {
    name: "nightly",
    role: "roles/gkebackup.viewer",
    members: ["group:sre@example.com"],
  });
  new EndpointIamMember("invoker", {
    name: "churn",
    role: "roles/aiplatform.user",
    member: "serviceAccount:data-eng@my-project.iam.gserviceaccount.com",
  });
};
