// Refresh reads each distinct policy once, never once per resource: 200 resources over 20
// policies (10 restore plans with 10 binding resources each, 10 endpoints with 10 member
// resources each) cost exactly 20 getIamPolicy calls, with a full state and with none.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld, StateResource } from "../../src/generated/schemas.js";
import { BINDING, MEMBER, bindingState, epName, makeState, memberState, rpName } from "../fixtures/builders.js";
import { expectExit, livePolicy, resetStats, runCli, stats, useEmulatorWorkspace, writeState } from "./helpers.js";

const N = 10;
const idx = (i: number) => String(i).padStart(2, "0");
const RPS = Array.from({ length: N }, (_, i) => rpName(`plan-${idx(i)}`));
const EPS = Array.from({ length: N }, (_, i) => epName(`model-${idx(i)}`));
const roleOf = (j: number) => `roles/gkebackup.custom${idx(j)}`;
const bindingMembers = (i: number, j: number) => [
  `user:b${idx(i)}-${idx(j)}@example.com`,
  `group:g${idx(j)}@example.com`,
];
const memberOf = (i: number, j: number) => `serviceAccount:sa-${idx(i)}-${idx(j)}@my-project.iam.gserviceaccount.com`;

function seed(): EmulatorWorld {
  return {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: RPS.map((name, i) => ({
      name,
      policy: { bindings: Array.from({ length: N }, (_, j) => ({ role: roleOf(j), members: bindingMembers(i, j) })) },
    })),
    endpoints: EPS.map((name, i) => ({
      name,
      policy: {
        bindings: [{ role: "roles/aiplatform.user", members: Array.from({ length: N }, (_, j) => memberOf(i, j)) }],
      },
    })),
  };
}

function stackText(): string {
  const out = ["name: big", "provider:", "  project: my-project", "  location: us-central1", "resources:"];
  RPS.forEach((name, i) => {
    for (let j = 0; j < N; j++) {
      out.push(
        `  rp${idx(i)}r${idx(j)}:`,
        `    type: ${BINDING}`,
        "    properties:",
        `      name: ${i % 2 ? name : `plan-${idx(i)}`}`,
        `      role: ${roleOf(j)}`,
        `      members: [${bindingMembers(i, j).join(", ")}]`,
      );
    }
  });
  EPS.forEach((name, i) => {
    for (let j = 0; j < N; j++) {
      out.push(
        `  ep${idx(i)}m${idx(j)}:`,
        `    type: ${MEMBER}`,
        "    properties:",
        `      name: ${i % 2 ? name : `us-central1/model-${idx(i)}`}`,
        "      role: roles/aiplatform.user",
        `      member: ${memberOf(i, j)}`,
      );
    }
  });
  return out.join("\n") + "\n";
}

const GET_RP = "gkebackup.projects.locations.restorePlans.getIamPolicy";
const GET_EP = "aiplatform.projects.locations.endpoints.getIamPolicy";

const ws = useEmulatorWorkspace(seed(), "converge-reads-");
let stackFile: string;

beforeAll(async () => {
  stackFile = join(ws.dir, "stack.yaml");
  await writeFile(stackFile, stackText());
  const resources: StateResource[] = [];
  for (const [i, name] of RPS.entries()) {
    const etag = (await livePolicy(ws.emu, name)).etag!;
    for (let j = 0; j < N; j++)
      resources.push(
        bindingState(`rp${idx(i)}r${idx(j)}`, { name, role: roleOf(j), members: bindingMembers(i, j) }, etag),
      );
  }
  for (const [i, name] of EPS.entries()) {
    const etag = (await livePolicy(ws.emu, name)).etag!;
    for (let j = 0; j < N; j++)
      resources.push(
        memberState(`ep${idx(i)}m${idx(j)}`, { name, role: "roles/aiplatform.user", member: memberOf(i, j) }, etag),
      );
  }
  expect(resources).toHaveLength(200);
  await mkdir(join(ws.dir, "warm"));
  await writeState(join(ws.dir, "warm", "big.json"), makeState("big", resources));
});

describe("refresh of 200 resources over 20 policies", () => {
  it("with a state holding all 200: exactly 20 getIamPolicy calls, and no changes", async () => {
    await resetStats(ws.emu);
    const r = await runCli(
      ["plan", "-f", stackFile, "--state", join(ws.dir, "warm", "big.json"), "--detailed-exitcode"],
      { emulator: ws.emu, cwd: ws.dir },
    );
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
    expect(r.stdout).toContain("Refreshed 20 IAM policies.");
    const s = await stats(ws.emu);
    expect(s.requests[GET_RP]).toBe(10);
    expect(s.requests[GET_EP]).toBe(10);
    expect(Object.values(s.requests).reduce((a, b) => a + b, 0)).toBe(20);
  });

  it("cold, with no state: still exactly 20 getIamPolicy calls, and 200 creates", async () => {
    await resetStats(ws.emu);
    const r = await runCli(
      ["plan", "-f", stackFile, "--state", join(ws.dir, "cold", "big.json"), "--detailed-exitcode"],
      { emulator: ws.emu, cwd: ws.dir },
    );
    expectExit(r, 2);
    expect(r.stdout).toContain("Plan: 0 to import, 200 to add, 0 to change, 0 to destroy.");
    const s = await stats(ws.emu);
    expect(s.requests[GET_RP]).toBe(10);
    expect(s.requests[GET_EP]).toBe(10);
    expect(Object.values(s.requests).reduce((a, b) => a + b, 0)).toBe(20);
  });
});
