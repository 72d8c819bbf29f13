// No stack or workspace name shares a file with another state or with the embedded emulator's
// world (issue 37, item 5): a workspace named "emulator" and a stack named X.emulator keep their
// state after writing to the embedded cloud; a stack P.W and workspace W of stack P (one state
// file) are refused where the second name is given; a world at the old name is moved, once.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { State } from "../../src/generated/schemas.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useTempDir } from "./helpers.js";

const SEED = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["a", "b", "c"].map((id) => ({ name: rp(id), policy: { bindings: [] } })),
};

const tmp = useTempDir("converge-name-collisions-");
const cli = (dir: string, args: string[]) => runCli(args, { cwd: dir, timeoutMs: 60_000 });

async function project(name: string): Promise<string> {
  const dir = join(tmp.dir, name);
  await mkdir(dir);
  await writeFile(join(dir, "seed.json"), JSON.stringify(SEED));
  return dir;
}

/** An embedded-emulator stack granting `member` on restore plan `id`. */
async function stack(dir: string, file: string, name: string, id: string, member: string): Promise<string> {
  const head = stackHead(name).replace("resources:\n", "  endpoint: embedded\n  seed: seed.json\nresources:\n");
  await writeFile(join(dir, file), head + bindingYaml("one", rp(id), "roles/gkebackup.viewer", [member]));
  return file;
}

const stateIn = async (path: string) => JSON.parse(await readFile(path, "utf8")) as State;

describe("names that cannot collide", { timeout: 120_000 }, () => {
  it('a workspace named "emulator" keeps its state after an apply to the embedded emulator', async () => {
    const dir = await project("ws-emulator");
    const file = await stack(dir, "stack.yaml", "app", "a", "user:a@example.com");
    expectExit(await cli(dir, ["workspace", "new", "emulator", "-f", file]), 0);
    expectExit(await cli(dir, ["apply", "--auto-approve", "-f", file]), 0);
    const state = await stateIn(join(dir, "state", "app.emulator.json"));
    expect(state.stack).toBe("app");
    expect(state.resources.map((r) => r.address)).toEqual(["one"]);
    const plan = await cli(dir, ["plan", "-f", file]);
    expectExit(plan, 0);
    expect(plan.stdout).toContain("No changes.");
  });

  it("a stack named X.emulator beside stack X: both keep their state and their cloud", async () => {
    const dir = await project("stack-emulator");
    const a = await stack(dir, "a.yaml", "app.emulator", "b", "user:b@example.com");
    const b = await stack(dir, "b.yaml", "app", "c", "user:c@example.com");
    expectExit(await cli(dir, ["apply", "--auto-approve", "-f", a]), 0);
    expectExit(await cli(dir, ["apply", "--auto-approve", "-f", b]), 0);
    for (const f of [a, b]) {
      const plan = await cli(dir, ["plan", "-f", f]);
      expectExit(plan, 0);
      expect(plan.stdout, f).toContain("No changes.");
    }
    expect((await stateIn(join(dir, "state", "app.emulator.json"))).stack).toBe("app.emulator");
  });

  it("stack P.W and workspace W of stack P: the second name given is refused, the first state kept", async () => {
    const dir = await project("stack-workspace");
    const web = await stack(dir, "web.yaml", "web", "a", "user:a@example.com");
    const webDev = await stack(dir, "web-dev.yaml", "web.dev", "b", "user:b@example.com");
    // The stack P.W first: workspace W of P is refused.
    expectExit(await cli(dir, ["apply", "--auto-approve", "-f", webDev]), 0);
    const refused = await cli(dir, ["workspace", "new", "dev", "-f", web]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('workspace "dev" of stack "web" would keep its state in');
    expect(refused.stderr).toContain('which holds the state of stack "web.dev"');
    expect((await stateIn(join(dir, "state", "web.dev.json"))).stack).toBe("web.dev");
    // Workspace W of P first: the stack P.W is refused, at its name in the stack file.
    const api = await stack(dir, "api.yaml", "api", "c", "user:c@example.com");
    const apiDev = await stack(dir, "api-dev.yaml", "api.dev", "c", "user:d@example.com");
    expectExit(await cli(dir, ["workspace", "new", "dev", "-f", api]), 0);
    const clash = await cli(dir, ["plan", "-f", apiDev]);
    expectExit(clash, 1);
    expect(clash.stderr).toContain("api-dev.yaml:1:7");
    expect(clash.stderr).toContain('stack name "api.dev" names the state file');
    expect(clash.stderr).toContain('the state of workspace "dev" of stack "api"');
  });

  it("a world kept at the old name ({stack}.emulator.json) is found and moved; a state there is left", async () => {
    const dir = await project("legacy-world");
    const file = await stack(dir, "stack.yaml", "app", "a", "user:a@example.com");
    expectExit(await cli(dir, ["apply", "--auto-approve", "-f", file]), 0);
    const world = await readFile(join(dir, "state", "app.emulator.world"), "utf8");
    await writeFile(join(dir, "state", "app.emulator.json"), world);
    const { rm } = await import("node:fs/promises");
    await rm(join(dir, "state", "app.emulator.world"));
    const plan = await cli(dir, ["plan", "-f", file]);
    expectExit(plan, 0);
    expect(plan.stdout).toContain("No changes.");
    expect(existsSync(join(dir, "state", "app.emulator.json"))).toBe(false);
    expect(await readFile(join(dir, "state", "app.emulator.world"), "utf8")).toBe(world);
  });
});
