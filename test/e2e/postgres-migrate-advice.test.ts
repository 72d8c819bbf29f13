// After `state migrate`, the advice it prints works as printed, also for a stack whose PostgreSQL
// schema is not the default one: the backend block it says to put in the stack file makes the next
// plan read the migrated state (it left the schema out, so the plan read another, empty schema and
// planned to add everything again), and the way it names to list the history lists it.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useFreshDatabase } from "../postgres/helpers.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [{ name: rp("adv"), policy: { bindings: [] } }],
  },
  "converge-migrate-advice-",
);
const fresh = useFreshDatabase("e2e_advice");
const cli = (args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu, env: fresh.db.env, timeoutMs: 60_000 });
const BLOCK = "backend: {type: postgres, schema: teamx}";

describe("the advice state migrate prints", { timeout: 180_000 }, () => {
  it("local → postgres (schema teamx) → local: each printed step works as printed", async () => {
    const file = join(ws.dir, "stack.yaml");
    const head = stackHead("advised");
    const resources = bindingYaml("v", rp("adv"), "roles/gkebackup.viewer", ["user:a@example.com"]);
    const withBlock = (block: string) => head.replace("resources:\n", `${block}\nresources:\n`) + resources;
    // The stack names its schema; its state is still local (first applied before the team moved).
    await writeFile(file, withBlock(BLOCK));
    expectExit(await cli(["apply", "--auto-approve", "--backend", "local"]), 0);

    const up = await cli(["state", "migrate", "--to", "postgres", "--backend", "local"]);
    expectExit(up, 0);
    const use = /Use `([^`]*)` in stack\.yaml/.exec(up.stdout)?.[1];
    expect(use, up.stdout).toBe(BLOCK);
    await writeFile(file, withBlock(use!));
    const plan = await cli(["plan"]);
    expectExit(plan, 0);
    expect(plan.stdout).toContain("No changes.");

    const down = await cli(["state", "migrate", "--to", "local"]);
    expectExit(down, 0);
    // As printed: with the block in the stack file, `converge state history` lists the history.
    expect(down.stdout).toContain(`with \`${BLOCK}\` in stack.yaml, converge state history lists it`);
    const history = await cli(["state", "history"]);
    expectExit(history, 0);
    expect(history.stdout).toContain("state migrate");
    // Then the local backend, as advised: no backend block.
    expect(down.stdout).toContain("Use no backend: in stack.yaml (or --backend local) from now on.");
    await writeFile(file, head + resources);
    expect((await cli(["plan"])).stdout).toContain("No changes.");
    expect(JSON.parse(await readFile(join(ws.dir, "state", "advised.json"), "utf8")).resources).toHaveLength(1);
  });
});
