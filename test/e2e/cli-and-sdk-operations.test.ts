// The CLI and the Automation API reach the same operations (src/engine/operations.ts): one stack
// applied by each, against two emulators seeded alike, makes the same changes (the same steps, in
// events), leaves the same live policies and an equal state; and both hold the state lock the same
// way: while either reviews a plan (the CLI's prompt, the API's approve callback) the other cannot
// apply.
import { mkdir, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Stack } from "../../src/automation/automation.js";
import type { EngineEvent } from "../../src/contracts/events.js";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { useFileEmulator } from "../support/emulator.js";
import { expectExit, runCli, useTempDir, world } from "./helpers.js";
import {
  bindingYaml,
  memberYaml,
  PROMPT,
  readStateFile,
  rp,
  ep,
  runInPty,
  stackHead,
  uiEvents,
} from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: { bindings: [{ role: "roles/gkebackup.viewer", members: ["user:old@example.com"] }] },
    },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};
const STACK =
  stackHead("same") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com", "group:sre@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "user:bob@example.com");

const tmp = useTempDir("converge-cli-and-sdk-");
const viaCli = useFileEmulator({ seed: SEED, port: 0, host: "127.0.0.1" });
const viaSdk = useFileEmulator({ seed: SEED, port: 0, host: "127.0.0.1" });

async function stackIn(name: string): Promise<string> {
  const dir = join(tmp.dir, name);
  await mkdir(dir);
  await writeFile(join(dir, "stack.yaml"), STACK);
  return dir;
}

/** What a state holds, without what differs by run (lineage, serial, etags, times). */
function comparable(s: State) {
  return s.resources.map(({ address, type, id, inputs, outputs }) => ({
    address,
    type,
    id,
    inputs,
    outputs: { ...outputs, etag: undefined },
  }));
}

describe("the CLI and the Automation API", { timeout: 120_000 }, () => {
  it("apply the same stack with the same steps, live policies and state", async () => {
    const cliDir = await stackIn("cli");
    const sdkDir = await stackIn("sdk");
    const cli = await runCli(["apply", "--auto-approve", "--json"], {
      cwd: cliDir,
      emulator: viaCli,
      timeoutMs: 60_000,
    });
    expectExit(cli, 0);
    const cliSteps = uiEvents(cli.stdout)
      .filter((e) => e.type === "apply_complete" && (e as { hook: { action?: string } }).hook.action !== "read")
      .map((e) => (e as unknown as { hook: { resource: { addr: string }; action: string } }).hook)
      .map((h) => `${h.resource.addr} ${h.action}`)
      .sort();

    process.env.CLOUDNATIVE_EMULATOR_HOST = viaSdk.hostPort;
    const events: EngineEvent[] = [];
    try {
      const stack = await Stack.fromFile(join(sdkDir, "stack.yaml"));
      const result = await stack.up({ onEvent: (e) => events.push(e) });
      expect(result.failed).toEqual([]);
    } finally {
      delete process.env.CLOUDNATIVE_EMULATOR_HOST;
    }
    const sdkSteps = events
      .flatMap((e) => (e.type === "step" && e.phase === "done" ? [`${e.address} ${e.action}`] : []))
      .sort();
    expect(sdkSteps).toEqual(["invoker create", "viewers create"]);
    expect(cliSteps).toEqual(sdkSteps);

    const [a, b] = [await world(viaCli), await world(viaSdk)];
    for (const name of [rp("nightly"), ep("churn")]) {
      const policy = (w: EmulatorWorld) =>
        [...(w.restorePlans ?? []), ...(w.endpoints ?? [])].find((o) => o.name === name)?.policy?.bindings;
      expect(policy(a)).toEqual(policy(b));
    }
    const [sa, sb] = [
      await readStateFile(join(cliDir, "state", "same.json")),
      await readStateFile(join(sdkDir, "state", "same.json")),
    ];
    expect(comparable(sa)).toEqual(comparable(sb));
  });

  it("hold the state lock alike: while one reviews a plan, the other cannot apply", async () => {
    const dir = await stackIn("lock");
    const file = join(dir, "stack.yaml");
    // The API reviews (its approve callback): the CLI is refused the lock.
    process.env.CLOUDNATIVE_EMULATOR_HOST = viaCli.hostPort;
    try {
      const stack = await Stack.fromFile(file);
      let refused = "";
      const result = await stack
        .up({
          approve: async () => {
            const r = await runCli(["apply", "--auto-approve"], { cwd: dir, emulator: viaCli, timeoutMs: 60_000 });
            expectExit(r, 1);
            refused = r.stderr;
            return false;
          },
        })
        .catch((e: Error) => e);
      expect(String(result)).toContain("not approved");
      expect(refused).toContain("state is locked");
      expect(existsSync(join(dir, "state", "same.json"))).toBe(false);

      // The CLI reviews (its prompt, in a terminal): the API is refused the lock.
      const pty = runInPty(["apply"], { cwd: dir, emulator: viaCli });
      try {
        await pty.waitFor(PROMPT);
        const err = await stack.up().catch((e: Error) => e);
        expect(String((err as { diagnostics?: { summary: string }[] }).diagnostics?.[0]?.summary ?? err)).toContain(
          "state is locked",
        );
        await pty.answer("no");
        expect(await pty.exit).toBe(1);
      } finally {
        pty.kill();
      }
    } finally {
      delete process.env.CLOUDNATIVE_EMULATOR_HOST;
    }
  });
});
