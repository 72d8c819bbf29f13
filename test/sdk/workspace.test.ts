// The Automation API in Pulumi's shape (LocalWorkspace): a stack from a directory with inputs set by
// setConfig (a secret one never printed), preview, up, outputs as {value, secret}, refresh and
// destroy, with onOutput and onEvent; Pulumi's stack is converge's workspace, so `dev` and `prod`
// of one program keep a state each; an inline program the same way.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { LocalWorkspace } from "../../src/automation/workspace.js";
import { RestorePlanIamBinding } from "../../src/sdk/resources.js";
import type { EngineEvent } from "../../src/contracts/events.js";
import type { Policy } from "../../src/generated/schemas.js";

const SEED = new URL("../../examples/quickstart/cloud.seed.yaml", import.meta.url).pathname;
const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ seedFile: SEED });
  dir = await mkdtemp(join(tmpdir(), "converge-workspace-"));
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

async function viewers(): Promise<string[]> {
  const res = await fetch(`${emu.url}/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`);
  const p = (await res.json()) as Policy;
  return [...(p.bindings?.find((b) => b.role === "roles/gkebackup.restoreAdmin")?.members ?? [])].sort();
}

const STACK = (endpoint: string) => `name: team
provider:
  project: my-project
  location: us-central1
  endpoint: ${endpoint}
config:
  reader:
    type: string
  token:
    type: string
    secret: true
resources:
  admins:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.restoreAdmin
      members: ["user:\${reader}"]
outputs:
  who: \${reader}
  token: \${token}
`;

describe("LocalWorkspace", { timeout: 60_000 }, () => {
  it("a directory's stack: setConfig, preview, up, outputs, refresh, destroy, with onOutput and onEvent", async () => {
    const work = join(dir, "team");
    await mkdir(work);
    await writeFile(join(work, "stack.yaml"), STACK(emu.url));
    const stack = await LocalWorkspace.createOrSelectStack({ stackName: "dev", workDir: work });
    await stack.setConfig("reader", { value: "ana@example.com" });
    await stack.setConfig("token", { value: "s3cret-t0ken-value", secret: true });
    expect(await stack.getConfig("reader")).toEqual({ value: "ana@example.com" });

    const printed: string[] = [];
    const preview = await stack.preview({ onOutput: (l) => printed.push(l) });
    expect(preview.changeSummary).toEqual({ create: 1 });
    expect(preview.stdout).toContain("+ cloudnative:backup/v1:RestorePlanIamBinding admins create");
    const events: EngineEvent[] = [];
    const up = await stack.up({ onOutput: (l) => printed.push(l), onEvent: (e) => events.push(e) });
    expect(up.summary).toEqual({ result: "succeeded", resourceChanges: { create: 1 } });
    expect(up.outputs).toEqual({
      who: { value: "ana@example.com", secret: false },
      token: { value: "s3cret-t0ken-value", secret: true },
    });
    expect(events.some((e) => e.type === "step" && e.phase === "done")).toBe(true);
    expect(await viewers()).toEqual(["user:ana@example.com"]);
    // Pulumi's stack is converge's workspace: its own state file.
    expect(existsSync(join(work, "state", "team.dev.json"))).toBe(true);
    expect(await stack.outputs()).toEqual(up.outputs);

    const refreshed = await stack.refresh();
    expect(refreshed.summary.result).toBe("succeeded");
    const gone = await stack.destroy({ onOutput: (l) => printed.push(l) });
    expect(gone.summary.result).toBe("succeeded");
    expect(await viewers()).toEqual([]);
    expect(printed.join("")).not.toContain("s3cret-t0ken-value");
  });

  it("an inline program: projectName is the stack, stackName its workspace", async () => {
    const stack = await LocalWorkspace.createOrSelectStack(
      {
        stackName: "prod",
        projectName: "inline-team",
        program: (s) => {
          s.provider = { project: "my-project", location: "us-central1", endpoint: emu.url };
          const b = new RestorePlanIamBinding("admins", {
            name: "nightly",
            role: "roles/gkebackup.restoreAdmin",
            members: ["user:bo@example.com"],
          });
          s.export("id", b.id);
        },
      },
      { workDir: dir },
    );
    const up = await stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(up.outputs.id).toEqual({ value: `${RP} roles/gkebackup.restoreAdmin`, secret: false });
    expect(existsSync(join(dir, "state", "inline-team.prod.json"))).toBe(true);
    expect(await viewers()).toEqual(["user:bo@example.com"]);
    expect((await stack.destroy()).summary.result).toBe("succeeded");
  });
});
