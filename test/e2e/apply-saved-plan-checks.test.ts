// Issue 11, item 3: a saved plan is checked, not trusted. `apply FILE` refuses a plan whose digest
// (or, with CONVERGE_PLAN_KEY, signature) does not match, a plan for another stack, and a plan
// whose grant changes differ from what a fresh plan would make now (an edited file, a live
// change since the review, an edited stack). The endpoint and the state come from the stack and
// the environment, never from the file. A refusal exits 1, writes no policy and leaves the state
// file byte-for-byte unchanged.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld, Plan, ResourceChange } from "../../src/generated/schemas.js";
import { sealPlan } from "../../src/plan/saved-plan.js";
import {
  type CliResult,
  expectExit,
  livePolicy,
  resetStats,
  runCli,
  setPolicyOutOfBand,
  startSeededEmulator,
  stats,
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";
import {
  addMember,
  BINDING_T,
  bindingYaml,
  membersOf,
  normalBindings,
  readJson,
  rp,
  setCalls,
  stackHead,
} from "./apply-helpers.js";

const ALICE = "user:alice@example.com";
const BOB = "user:bob@example.com";
const MALLORY = "user:mallory@example.com";
const VIEWER = "roles/gkebackup.viewer";
/** A binding nobody declared in converge: it must survive every refused apply. */
const FOREIGN = { role: "roles/gkebackup.admin", members: ["user:root@example.com"] };
const KEY = "s3cret-plan-key-0123456789";

const IDS = [
  "edited",
  "resealed",
  "signed",
  "foreign",
  "endpoint",
  "live-add",
  "live-remove",
  "unrelated",
  "stack-edit",
  "renamed",
  "other-file",
];
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: IDS.map((id) => ({ name: rp(id), policy: { bindings: [FOREIGN] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-saved-checks-");

interface Case {
  id: string;
  planFile: string;
  statePath: string;
  /** Runs the CLI in the case's directory (stack.yaml there is the default -f). */
  cli(args: string[], env?: Record<string, string>): Promise<CliResult>;
  writeStack(members: string[], name?: string): Promise<void>;
}

/**
 * Restore plan `id` gets viewers = [alice] applied; the stack then adds bob and that plan is
 * saved (with `env`, e.g. the signing key). `endpoint`: the stack names the emulator itself and
 * CLOUDNATIVE_EMULATOR_HOST is unset.
 */
async function reviewed(id: string, o: { env?: Record<string, string>; endpoint?: string } = {}): Promise<Case> {
  const dir = join(ws.dir, id);
  await mkdir(dir, { recursive: true });
  const head = (name: string) =>
    o.endpoint ? stackHead(name).replace("resources:\n", `  endpoint: ${o.endpoint}\nresources:\n`) : stackHead(name);
  const c: Case = {
    id,
    planFile: join(dir, "viewers.plan.json"),
    statePath: join(dir, "state", `${id}.json`),
    cli: (args, env) =>
      runCli([...args, "--state", c.statePath], {
        cwd: dir,
        ...(o.endpoint ? {} : { emulator: ws.emu }),
        ...(env ? { env } : {}),
      }),
    writeStack: (members, name = id) =>
      writeFile(join(dir, "stack.yaml"), head(name) + bindingYaml("viewers", id, VIEWER, members)),
  };
  await c.writeStack([ALICE]);
  expectExit(await c.cli(["apply", "--auto-approve"]), 0);
  await c.writeStack([ALICE, BOB]);
  expectExit(await c.cli(["plan", "--out", c.planFile], o.env), 0);
  return c;
}

type Reseal = "none" | "digest" | "digest-keep-signature";

/** Edits the saved plan as an attacker would; `reseal` recomputes the digest (no key known). */
async function editPlan(file: string, edit: (p: Plan) => void, reseal: Reseal): Promise<void> {
  const p = await readJson<Plan>(file);
  edit(p);
  let out = p;
  if (reseal !== "none") {
    out = sealPlan(p, undefined);
    if (reseal === "digest-keep-signature" && p.signature) out.signature = p.signature;
  }
  await writeFile(file, JSON.stringify(out, null, 2) + "\n");
}

function readJsonText(text: string): Plan {
  return JSON.parse(text) as Plan;
}

const viewersOf = (p: Plan): ResourceChange => p.resource_changes.find((c) => c.address === "viewers")!;

function addMallory(p: Plan): void {
  (viewersOf(p).change.after as { members: string[] }).members.push(MALLORY);
  p.access_changes?.changes.push({
    object: rp(p.stack.name),
    kind: "restorePlan",
    principal: MALLORY,
    role: VIEWER,
    action: "grant",
    addresses: ["viewers"],
  });
}

/** `apply FILE` exits 1 with every pattern on stderr; no policy written, state bytes unchanged. */
async function expectRefused(c: Case, patterns: RegExp[], env?: Record<string, string>): Promise<CliResult> {
  const state = await readFile(c.statePath);
  const live = normalBindings(await livePolicy(ws.emu, rp(c.id)));
  await resetStats(ws.emu);
  const r = await c.cli(["apply", c.planFile], env);
  expectExit(r, 1);
  for (const p of patterns) expect(r.stderr).toMatch(p);
  expect(setCalls(await stats(ws.emu))).toBe(0);
  expect((await readFile(c.statePath)).equals(state)).toBe(true);
  expect(normalBindings(await livePolicy(ws.emu, rp(c.id)))).toEqual(live);
  return r;
}

async function expectApplied(c: Case, env?: Record<string, string>): Promise<CliResult> {
  await resetStats(ws.emu);
  const r = await c.cli(["apply", c.planFile], env);
  expectExit(r, 0);
  expect(r.stdout).toContain("Apply complete! Resources: 0 added, 1 changed, 0 destroyed.");
  expect(setCalls(await stats(ws.emu))).toBe(1);
  expect(membersOf(await livePolicy(ws.emu, rp(c.id)), VIEWER)).toEqual([ALICE, BOB]);
  expect(membersOf(await livePolicy(ws.emu, rp(c.id)), FOREIGN.role)).toEqual(FOREIGN.members);
  return r;
}

describe("an edited saved plan", () => {
  it("with a member added to a binding is refused: its digest does not match", async () => {
    const c = await reviewed("edited");
    await editPlan(c.planFile, addMallory, "none");
    await expectRefused(c, [/viewers\.plan\.json does not match its digest/]);
    expect(totalRequests(await stats(ws.emu))).toBe(0); // refused before any cloud call
  });

  it("with the digest recomputed (no key) is refused by the re-plan, naming the difference", async () => {
    const c = await reviewed("resealed");
    await editPlan(c.planFile, addMallory, "digest");
    const r = await expectRefused(c, [
      /differs from what apply would do now/,
      new RegExp(
        String.raw`viewers: members after the change: the saved plan has \[.*user:mallory@example\.com.*\], a` +
          String.raw` fresh plan has \[user:alice@example\.com, user:bob@example\.com\]`,
      ),
      new RegExp(
        String.raw`the saved plan grants user:mallory@example\.com roles\/gkebackup\.viewer on .*restorePlans` +
          String.raw`\/resealed; a fresh plan would not`,
      ),
    ]);
    expect(r.stderr).toMatch(/Nothing was applied/);
  });

  it(
    "with CONVERGE_PLAN_KEY: a missing or wrong signature is refused, " +
      "the signed plan applies, the key is never shown",
    async () => {
      const env = { CONVERGE_PLAN_KEY: KEY };
      const c = await reviewed("signed", { env });
      const signed = await readFile(c.planFile, "utf8");
      expect(readJsonText(signed).signature).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
      const outputs: string[] = [signed];
      const refuse = async (patterns: RegExp[], applyEnv = env) =>
        outputs.push(...Object.values(await expectRefused(c, patterns, applyEnv)).map(String));

      await editPlan(c.planFile, addMallory, "digest-keep-signature");
      await refuse([/signature that does not match CONVERGE_PLAN_KEY/]);
      await editPlan(c.planFile, (p) => delete p.signature, "digest");
      await refuse([/viewers\.plan\.json is not signed, and CONVERGE_PLAN_KEY is set/]);
      await writeFile(c.planFile, signed);
      await refuse([/signature that does not match CONVERGE_PLAN_KEY/], { CONVERGE_PLAN_KEY: "another-key" });
      // Saved without a key, applied with one.
      expectExit(await c.cli(["plan", "--out", c.planFile]), 0);
      await refuse([/is not signed, and CONVERGE_PLAN_KEY is set/]);

      await writeFile(c.planFile, signed);
      outputs.push(...Object.values(await expectApplied(c, env)).map(String));
      for (const text of outputs) expect(text).not.toContain(KEY);
    },
  );

  it("deleting a binding converge does not manage is refused, and the binding stays", async () => {
    const c = await reviewed("foreign");
    await editPlan(
      c.planFile,
      (p) => {
        const before = {
          name: rp("foreign"),
          role: FOREIGN.role,
          members: FOREIGN.members,
          etag: "x",
          id: `${rp("foreign")} ${FOREIGN.role}`,
          project: "my-project",
        };
        p.resource_changes.push({
          address: "takeover",
          mode: "managed",
          type: BINDING_T,
          name: "takeover",
          policy: rp("foreign"),
          change: {
            action: "delete",
            before,
            after: null,
            after_unknown: {},
            before_sensitive: false,
            after_sensitive: false,
          },
        });
        p.access_changes?.changes.push({
          object: rp("foreign"),
          kind: "restorePlan",
          principal: "user:root@example.com",
          role: FOREIGN.role,
          action: "revoke",
          addresses: ["takeover"],
        });
        p.applyable = true;
      },
      "digest",
    );
    await expectRefused(c, [
      /takeover: the saved plan deletes it; a fresh plan has no change for it/,
      new RegExp(
        String.raw`the saved plan revokes user:root@example\.com roles\/gkebackup\.admin on .*restorePlans\/f` +
          String.raw`oreign; a fresh plan would not`,
      ),
    ]);
    expect(membersOf(await livePolicy(ws.emu, rp("foreign")), FOREIGN.role)).toEqual(FOREIGN.members);
  });
});

describe("the endpoint comes from the stack, never from the plan file", () => {
  let decoy: RunningEmulator;
  beforeAll(async () => {
    decoy = await startSeededEmulator(SEED);
  });
  afterAll(async () => {
    await decoy.close();
  });

  it("an edited endpoint is refused by the digest; re-sealed, apply still talks to the stack's emulator", async () => {
    const c = await reviewed("endpoint", { endpoint: ws.emu.url });
    const pointAtDecoy = (p: Plan) => void (p.provider.endpoint = decoy.url);
    await editPlan(c.planFile, pointAtDecoy, "none");
    await expectRefused(c, [/does not match its digest/]);
    await editPlan(c.planFile, pointAtDecoy, "digest");
    await resetStats(decoy);
    await expectApplied(c);
    expect(totalRequests(await stats(decoy))).toBe(0);
  });
});

describe("a saved plan that no longer matches the world", () => {
  it("is refused when another writer added a member to a binding it touches (apply would revoke it)", async () => {
    const c = await reviewed("live-add");
    await setPolicyOutOfBand(ws.emu, rp("live-add"), (p) => addMember(p, VIEWER, "user:carol@example.com"));
    await expectRefused(c, [
      new RegExp(
        String.raw`viewers: members before the change: the saved plan has \[user:alice@example\.com\], a fres` +
          String.raw`h plan has \[user:alice@example\.com, user:carol@example\.com\]`,
      ),
      new RegExp(
        String.raw`a fresh plan would revoke user:carol@example\.com roles\/gkebackup\.viewer on .*restorePla` +
          String.raw`ns\/live-add; the saved plan does not`,
      ),
    ]);
  });

  it(
    "is refused when another writer removed a member from a binding it " +
      "touches (its only one: the binding is gone)",
    async () => {
      const c = await reviewed("live-remove");
      await setPolicyOutOfBand(ws.emu, rp("live-remove"), (p) => ({
        ...p,
        bindings: (p.bindings ?? []).filter((b) => b.role !== VIEWER),
      }));
      await expectRefused(c, [
        /viewers: the saved plan updates it \(update\), a fresh plan would create it \(create\)/,
        new RegExp(
          String.raw`a fresh plan would grant user:alice@example\.com roles\/gkebackup\.viewer on .*restorePlan` +
            String.raw`s\/live-remove; the saved plan does not`,
        ),
      ]);
    },
  );

  it(
    "applies when a live change elsewhere in the policy leaves its " + "grants as reviewed (only the etag moved)",
    async () => {
      const c = await reviewed("unrelated");
      await setPolicyOutOfBand(ws.emu, rp("unrelated"), (p) =>
        addMember(p, "roles/gkebackup.operator", "user:dave@example.com"),
      );
      await expectApplied(c);
      expect(membersOf(await livePolicy(ws.emu, rp("unrelated")), "roles/gkebackup.operator")).toEqual([
        "user:dave@example.com",
      ]);
    },
  );

  it("is refused when the stack was edited since the review", async () => {
    const c = await reviewed("stack-edit");
    // The file decides the options; they cannot be changed at apply time.
    const withTarget = await c.cli(["apply", c.planFile, "--target", "viewers"]);
    expectExit(withTarget, 1);
    expect(withTarget.stderr).toMatch(/--target, --replace and --refresh cannot be given with a plan file/);
    await c.writeStack([ALICE, BOB, "user:eve@example.com"]);
    await expectRefused(c, [
      new RegExp(
        String.raw`viewers: members after the change: the saved plan has \[user:alice@example\.com, user:bob@` +
          String.raw`example\.com\], a fresh plan has \[.*user:eve@example\.com\]`,
      ),
    ]);
  });

  // `apply FILE` loads the stack -f names (stack.yaml by default), not the one the plan was made
  // from: with another file of the same stack name the fresh plan differs and apply refuses, but
  // the refusal only listed differences, as if the stack had been edited since the review.
  it(
    "is refused when apply loads another file of the same stack, " + "and says which file the plan was made from",
    async () => {
      const c = await reviewed("other-file");
      const dir = join(ws.dir, "other-file");
      await writeFile(
        join(dir, "team.yaml"),
        stackHead("other-file") + bindingYaml("viewers", "other-file", VIEWER, [ALICE, "user:eve@example.com"]),
      );
      const state = await readFile(c.statePath);
      const r = await c.cli(["apply", c.planFile, "-f", "team.yaml"]);
      expectExit(r, 1);
      expect(r.stderr).toMatch(/differs from what apply would do now/);
      expect(r.stderr).toContain(
        `The plan was made from ${join(dir, "stack.yaml")}; this apply loaded ${join(dir, "team.yaml")} (-f).`,
      );
      expect((await readFile(c.statePath)).equals(state)).toBe(true);
    },
  );

  it("is refused when it was made for another stack, naming both", async () => {
    const c = await reviewed("renamed");
    await c.writeStack([ALICE, BOB], "other-stack");
    await expectRefused(c, [
      /the saved plan .*viewers\.plan\.json is for stack "renamed", but stack\.yaml defines stack "other-stack"/,
    ]);
    expect(totalRequests(await stats(ws.emu))).toBe(0);
  });
});
