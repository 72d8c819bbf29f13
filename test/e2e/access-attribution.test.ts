// The hostile tester's f2/s2.yaml: two member resources grant q1 and q2 the same role on one
// endpoint. The access view, the Markdown and `plan --json` credit each grant to the one resource
// that makes it (they listed "(a, b)" for both). Built CLI against a seeded emulator.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";
import { ep, memberYaml, stackHead } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-access-attribution-");

const STACK =
  stackHead("fe3") +
  memberYaml("a", "churn", "roles/aiplatform.viewer", '"user:q1@example.com"') +
  memberYaml("b", "churn", "roles/aiplatform.viewer", '"user:q2@example.com"');

async function plan(...args: string[]) {
  const file = join(ws.dir, "s2.yaml");
  await writeFile(file, STACK);
  const r = await runCli(["plan", "-f", file, "--state", join(ws.dir, "s2.json"), ...args], {
    cwd: ws.dir,
    emulator: ws.emu,
  });
  expectExit(r, 0);
  return r.stdout;
}

describe("two member resources on one role", () => {
  it("the access view credits each grant to its own resource", async () => {
    const out = await plan("--view", "access");
    expect(out).toMatch(/\+ user:q1@example\.com +roles\/aiplatform\.viewer {2}\(a\)\n/);
    expect(out).toMatch(/\+ user:q2@example\.com +roles\/aiplatform\.viewer {2}\(b\)\n/);
  });

  it("so does the Markdown", async () => {
    const out = await plan("--format", "markdown");
    expect(out).toMatch(/\| `user:q1@example\.com` \| `roles\/aiplatform\.viewer` \|[^\n]*\| `a` \|\n/);
    expect(out).toMatch(/\| `user:q2@example\.com` \| `roles\/aiplatform\.viewer` \|[^\n]*\| `b` \|\n/);
  });

  it("so does plan --json", async () => {
    const json = JSON.parse(await plan("--json")) as {
      converge: { access_changes: { changes: { principal: string; addresses: string[] }[] } };
    };
    expect(json.converge.access_changes.changes.map((c) => [c.principal, c.addresses])).toEqual([
      ["user:q1@example.com", ["a"]],
      ["user:q2@example.com", ["b"]],
    ]);
  });
});
