// Another writer changes a policy between the plan and its apply (while it is reviewed at an
// approval prompt, here the Automation API's approve callback): the apply's first write meets an etag conflict, reads
// the policy again and
// would re-apply the reviewed changes. It must not revoke the other writer's grant (the plan said
// nobody loses access). Adoption is decided at plan time only: a grant the other writer made after
// the plan, that the reviewed plan creates, is the stack's (a re-read during apply cannot tell it
// from converge's own write whose answer was lost), and destroy removes it. Real engine, real
// policy engine, the emulator over loopback.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { Stack } from "../../src/automation/automation.js";
import { EndpointIamMember, RestorePlanIamBinding } from "../../src/sdk/resources.js";
import type { Policy } from "../../src/generated/schemas.js";

const rp = (id: string) => `projects/my-project/locations/us-central1/restorePlans/${id}`;
const ep = (id: string) => `projects/my-project/locations/us-central1/endpoints/${id}`;
const membersOf = (p: Policy, role: string) =>
  [...(p.bindings?.find((b) => b.role === role && !b.condition)?.members ?? [])].sort();

const SEED = new URL("../../examples/quickstart/cloud.seed.yaml", import.meta.url).pathname;
const VIEWER = "roles/gkebackup.viewer";
const USER = "roles/aiplatform.user";
let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ seedFile: SEED });
  dir = await mkdtemp(join(tmpdir(), "converge-other-writer-"));
});

afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const provider = () => ({ project: "my-project", location: "us-central1", endpoint: emu.url });

/** The public REST API, as any other client uses it (restore plans v1, endpoints v1beta1). */
const apiOf = (name: string) =>
  name.includes("/endpoints/") ? { version: "v1beta1", read: "POST" } : { version: "v1", read: "GET" };

async function livePolicy(name: string): Promise<Policy> {
  const api = apiOf(name);
  const res = await fetch(`${emu.url}/${api.version}/${name}:getIamPolicy?options.requestedPolicyVersion=3`, {
    method: api.read,
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Policy;
}

/** Another writer's read-modify-write: one more member of `role`. */
async function otherWriterAdds(name: string, role: string, member: string): Promise<void> {
  const p = await livePolicy(name);
  const bindings = p.bindings ?? [];
  const b = bindings.find((x) => x.role === role && !x.condition);
  if (b) b.members.push(member);
  else bindings.push({ role, members: [member] });
  const res = await fetch(`${emu.url}/${apiOf(name).version}/${name}:setIamPolicy`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ policy: { ...p, bindings, version: 3 } }),
  });
  expect(res.status).toBe(200);
}

describe("apply after another writer changed the policy since the plan", () => {
  it("refuses to revoke the other writer's new member, writes nothing to that policy, records nothing", async () => {
    const stack = await Stack.inline(
      "other-writer-binding",
      (s) => {
        s.provider = provider();
        new RestorePlanIamBinding("viewers", {
          name: "nightly",
          role: VIEWER,
          members: ["user:carol@example.com", "user:alice@example.com"],
        });
      },
      { dir },
    );
    // The other writer acts while the plan is reviewed (the lock held, as at the CLI's prompt).
    const result = await stack.up({
      approve: async (plan) => {
        expect(plan.access_changes?.changes.filter((c) => c.action === "revoke")).toEqual([]);
        await otherWriterAdds(rp("nightly"), VIEWER, "user:bob@example.com");
        return true;
      },
    });
    expect(result.failed.map((f) => f.address)).toEqual(["viewers"]);
    const why = result.failed[0]!.diagnostic;
    expect(`${why.summary} ${why.detail}`).toContain("revoke user:bob@example.com from roles/gkebackup.viewer");
    expect(`${why.summary} ${why.detail}`).toContain("which is not in the plan");
    expect(membersOf(await livePolicy(rp("nightly")), VIEWER)).toEqual([
      "user:bob@example.com",
      "user:carol@example.com",
    ]);
    expect(result.state.resources.map((r) => r.address)).toEqual([]);
  });

  it(
    "a member the other writer granted after the plan is the " + "stack's, as the plan said: destroy removes it",
    async () => {
      const program = (s: Parameters<Parameters<typeof Stack.inline>[1]>[0]) => {
        s.provider = provider();
        new EndpointIamMember("erin", { name: "churn", role: USER, member: "user:erin@example.com" });
      };
      const stack = await Stack.inline("other-writer-member", program, { dir });
      const result = await stack.up({
        approve: async (plan) => {
          expect(plan.resource_changes.find((c) => c.address === "erin")?.after_adopted).toBeUndefined();
          await otherWriterAdds(ep("churn"), USER, "user:erin@example.com");
          return true;
        },
      });
      expect(result.failed).toEqual([]);
      expect(result.state.resources.find((r) => r.address === "erin")?.adopted).toBeUndefined();
      const gone = await stack.destroy();
      expect(gone.failed).toEqual([]);
      expect(membersOf(await livePolicy(ep("churn")), USER)).not.toContain("user:erin@example.com");
    },
  );

  it(
    "a plan made without refresh revokes nothing it did not show: a " + "member added live since the state is kept",
    async () => {
      const viewers = (members: string[]) => (s: Parameters<Parameters<typeof Stack.inline>[1]>[0]) => {
        s.provider = provider();
        new RestorePlanIamBinding("viewers", { name: "nightly", role: "roles/gkebackup.restoreAdmin", members });
      };
      const first = await Stack.inline("no-refresh", viewers(["user:alice@example.com"]), { dir });
      expect((await first.apply(await first.plan())).failed).toEqual([]);
      await otherWriterAdds(rp("nightly"), "roles/gkebackup.restoreAdmin", "user:bob@example.com");
      const second = await Stack.inline("no-refresh", viewers(["user:alice@example.com", "user:alice2@example.com"]), {
        dir,
      });
      const plan = await second.plan({ refresh: false });
      const result = await second.apply(plan);
      expect(result.failed.map((f) => f.address)).toEqual(["viewers"]);
      expect(`${result.failed[0]!.diagnostic.summary} ${result.failed[0]!.diagnostic.detail}`).toContain(
        "revoke user:bob@example.com from roles/gkebackup.restoreAdmin",
      );
      expect(membersOf(await livePolicy(rp("nightly")), "roles/gkebackup.restoreAdmin")).toEqual([
        "user:alice@example.com",
        "user:bob@example.com",
      ]);
    },
  );
});
