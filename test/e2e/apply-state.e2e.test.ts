// Cross-check of the hand-written states used by the plan e2e tests: the state that
// `converge apply --auto-approve` writes for the same stack has the same resources (address,
// type, id, normalized inputs, outputs = inputs + etag + id + project, dependencies), and a
// plan right after apply shows no changes.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { State } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { BINDING, EP, MEMBER, RP, bindingState, memberState } from "../fixtures/builders.js";
import { expectExit, livePolicy, runCli, startSeededEmulator, stats, tempDir } from "./helpers.js";

const STACK = `name: roundtrip
provider:
  project: my-project
  location: us-central1
resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:bob@example.com, user:Alice@example.com]
  temp:
    type: ${BINDING}
    properties:
      name: us-central1/nightly
      role: roles/gkebackup.admin
      members: [user:oncall@example.com]
      condition: { title: until-2027, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' }
  invoker:
    type: ${MEMBER}
    properties:
      name: churn
      role: roles/aiplatform.user
      member: user:dana@example.com
    options:
      dependsOn: [viewers]
outputs:
  viewersId: \${viewers.id}
`;

let emu: RunningEmulator;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let stackFile: string;
let statePath: string;

beforeAll(async () => {
  emu = await startSeededEmulator({ projects: { "my-project": { number: "123456789012" } }, restorePlans: [{ name: RP }], endpoints: [{ name: EP }] });
  tmp = await tempDir("converge-apply-");
  stackFile = join(tmp.dir, "stack.yaml");
  statePath = join(tmp.dir, "state", "roundtrip.json");
  await writeFile(stackFile, STACK);
  await mkdir(join(tmp.dir, "state"));
});

afterAll(async () => {
  await emu?.close();
  await tmp?.remove();
});

describe("apply writes the state the plan tests write by hand", () => {
  it("applies, then the written state matches the hand-written form", async () => {
    const r = await runCli(["apply", "-f", stackFile, "--state", statePath, "--auto-approve"], { emulator: emu, cwd: tmp.dir });
    expectExit(r, 0);
    const state = JSON.parse(await readFile(statePath, "utf8")) as State;
    expect(validate("state.schema.json", state)).toEqual([]);
    const rpEtag = (await livePolicy(emu, RP)).etag!;
    const epEtag = (await livePolicy(emu, EP)).etag!;
    const cond = { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };
    const expected = [
      bindingState("viewers", { name: RP, role: "roles/gkebackup.viewer", members: ["user:bob@example.com", "user:Alice@example.com"] }, rpEtag),
      bindingState("temp", { name: RP, role: "roles/gkebackup.admin", members: ["user:oncall@example.com"], condition: cond }, rpEtag),
      memberState("invoker", { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" }, epEtag, ["viewers"]),
    ];
    // etags: whatever the write that touched the policy last returned; compared separately.
    const strip = (x: State["resources"][number]) => ({ ...x, outputs: { ...x.outputs, etag: "-" } });
    expect([...state.resources].map(strip).sort((a, b) => a.address.localeCompare(b.address))).toEqual(expected.map(strip).sort((a, b) => a.address.localeCompare(b.address)));
    for (const res of state.resources) expect(res.outputs.etag).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(state.outputs).toEqual({ viewersId: `${RP} roles/gkebackup.viewer` });

    const p = await runCli(["plan", "-f", stackFile, "--state", statePath, "--detailed-exitcode"], { emulator: emu, cwd: tmp.dir });
    expectExit(p, 0);
    expect(p.stdout).toContain("No changes.");
    const s = await stats(emu);
    // apply merged the two restore-plan grants into one read-modify-write of that policy
    expect(s.requests["gkebackup.projects.locations.restorePlans.setIamPolicy"]).toBe(1);
    expect(s.requests["aiplatform.projects.locations.endpoints.setIamPolicy"]).toBe(1);
  });
});
