// Cross-check of the hand-written states used by the plan e2e tests: the state that
// `converge apply --auto-approve` writes for the same stack has the same resources (address,
// type, id, normalized inputs, outputs = inputs + etag + id + project, dependencies), and a
// plan right after apply shows no changes.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { EP, RP, bindingState, memberState } from "../fixtures/builders.js";
import { bindingYaml, DANA_INVOKER, NIGHTLY_VIEWERS, stackHead } from "./apply-helpers.js";
import { expectExit, livePolicy, runCli, stats, useStackWorkspace } from "./helpers.js";

const TEMP = bindingYaml(
  "temp",
  "us-central1/nightly",
  "roles/gkebackup.admin",
  ["user:oncall@example.com"],
  `      condition: { title: until-2027, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' }\n`,
);
const STACK =
  `${stackHead("roundtrip")}${NIGHTLY_VIEWERS}${TEMP}` + `${DANA_INVOKER}outputs:\n  viewersId: \${viewers.id}\n`;

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: RP }],
  endpoints: [{ name: EP }],
};
const ws = useStackWorkspace(SEED, "converge-apply-", STACK, "roundtrip.json");

describe("apply writes the state the plan tests write by hand", () => {
  it("applies, then the written state matches the hand-written form", async () => {
    const r = await runCli(["apply", "-f", ws.stackFile, "--state", ws.statePath, "--auto-approve"], {
      emulator: ws.emu,
      cwd: ws.dir,
    });
    expectExit(r, 0);
    const state = JSON.parse(await readFile(ws.statePath, "utf8")) as State;
    expect(validate("state.schema.json", state)).toEqual([]);
    const rpEtag = (await livePolicy(ws.emu, RP)).etag!;
    const epEtag = (await livePolicy(ws.emu, EP)).etag!;
    const cond = { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };
    const expected = [
      bindingState(
        "viewers",
        { name: RP, role: "roles/gkebackup.viewer", members: ["user:bob@example.com", "user:Alice@example.com"] },
        rpEtag,
      ),
      bindingState(
        "temp",
        { name: RP, role: "roles/gkebackup.admin", members: ["user:oncall@example.com"], condition: cond },
        rpEtag,
      ),
      memberState("invoker", { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" }, epEtag, [
        "viewers",
      ]),
    ];
    // etags: whatever the write that touched the policy last returned; compared separately.
    const strip = (x: State["resources"][number]) => ({ ...x, outputs: { ...x.outputs, etag: "-" } });
    expect([...state.resources].map(strip).sort((a, b) => a.address.localeCompare(b.address))).toEqual(
      expected.map(strip).sort((a, b) => a.address.localeCompare(b.address)),
    );
    for (const res of state.resources) expect(res.outputs.etag).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(state.outputs).toEqual({ viewersId: `${RP} roles/gkebackup.viewer` });

    const p = await runCli(["plan", "-f", ws.stackFile, "--state", ws.statePath, "--detailed-exitcode"], {
      emulator: ws.emu,
      cwd: ws.dir,
    });
    expectExit(p, 0);
    expect(p.stdout).toContain("No changes.");
    const s = await stats(ws.emu);
    // apply merged the two restore-plan grants into one read-modify-write of that policy
    expect(s.requests["gkebackup.projects.locations.restorePlans.setIamPolicy"]).toBe(1);
    expect(s.requests["aiplatform.projects.locations.endpoints.setIamPolicy"]).toBe(1);
  });
});
