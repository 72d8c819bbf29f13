// Team state on PostgreSQL under a hostile user (session review): the real CLI against the
// emulator over loopback and the run's real PostgreSQL. An apply that is still writing holds what
// it is about to claim (another stack's apply of the same grant meanwhile is refused before any
// write), and the database password appears in no output, log, saved plan or history.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { useFreshDatabase } from "../postgres/helpers.js";
import {
  bindingYaml,
  clearFaults,
  M,
  membersOf,
  memberYaml,
  policyIn,
  rp,
  setFaults,
  stackHead,
} from "./apply-helpers.js";
import { expectExit, refusedHostPort, runCli, startCli, useEmulatorWorkspace, world } from "./helpers.js";

const VIEWER = "roles/gkebackup.viewer";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["slow-0", "slow-1", "slow-2", "slow-3", "contested", "creds", "mover", "held"].map((id) => ({
    name: rp(id),
    policy: { bindings: [] },
  })),
};

const ws = useEmulatorWorkspace(SEED, "converge-postgres-hostile-");
const fresh = useFreshDatabase("e2e_hostile");

async function stackFile(name: string, resources: string): Promise<string> {
  const file = join(ws.dir, `${name}.yaml`);
  await writeFile(
    file,
    stackHead(name).replace("resources:\n", "backend:\n  type: postgres\n  schema: hostile\nresources:\n") + resources,
  );
  return file;
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: ws.dir, emulator: ws.emu, env: { ...fresh.db.env, ...env }, timeoutMs: 90_000 });

describe("team state on PostgreSQL, hostile", { timeout: 120_000 }, () => {
  it(
    "while an apply is writing, another stack's apply of a grant it " + "is about to claim is refused before any write",
    async () => {
      // The slow apply writes its four other bindings first (dependsOn), one at a time, each write
      // answered after 5 s (reads are not slowed): its claim on "contested" is reserved, not in its
      // state yet, while the other stack plans and applies. The other apply starts once the
      // reservation is recorded, and has the remaining writes' 20 s to be refused (it used to wait
      // for "Plan:" and have 1.6 s, which a loaded machine did not always give it).
      const slow = ["slow-0", "slow-1", "slow-2", "slow-3"]
        .map((id, i) =>
          bindingYaml(
            `b${i}`,
            rp(id),
            VIEWER,
            ["user:slow@example.com"],
            i ? `    options:\n      dependsOn: [b${i - 1}]\n` : "",
          ),
        )
        .join("");
      const first = await stackFile(
        "first",
        slow +
          memberYaml("late", rp("contested"), VIEWER, "user:first@example.com", "    options:\n      dependsOn: [b3]\n")
            .replace("EndpointIamMember", "RestorePlanIamMember")
            .replace("aiplatform/v1beta1", "backup/v1"),
      );
      const second = await stackFile(
        "second",
        bindingYaml("viewers", rp("contested"), VIEWER, ["user:second@example.com"]),
      );
      await setFaults(ws.emu, { latencyMs: 5_000, methods: [M.rpSet] });
      try {
        const holder = startCli(["apply", "--auto-approve", "--parallelism", "1", "-f", first], {
          cwd: ws.dir,
          emulator: ws.emu,
          env: fresh.db.env,
          timeoutMs: 90_000,
        });
        await holder.waitFor("Plan:");
        const reserved = async () =>
          (await fresh.db.admin.query("SELECT count(*)::int AS n FROM hostile.reservations WHERE stack = 'first'"))
            .rows[0].n as number;
        await expect.poll(reserved, { timeout: 60_000, interval: 100 }).toBeGreaterThan(0);
        const refused = await cli(["apply", "--auto-approve", "-f", second]);
        expectExit(refused, 1);
        expect(refused.stderr).toContain('which stack "first" workspace "default" is applying now (resource "late"');
        expectExit(await holder.done, 0);
      } finally {
        await clearFaults(ws.emu);
      }
      expect(membersOf(policyIn(await world(ws.emu), rp("contested")), VIEWER)).toEqual(["user:first@example.com"]);
      const owners = await fresh.db.admin.query("SELECT stack FROM hostile.claims WHERE object = $1", [
        rp("contested"),
      ]);
      expect(owners.rows).toEqual([{ stack: "first" }]);
    },
  );

  it("the password is in no output, log file, saved plan, history or claims list", async () => {
    const file = await stackFile("creds", bindingYaml("viewers", rp("creds"), VIEWER, ["user:c@example.com"]));
    const log = join(ws.dir, "converge.log");
    const env = { CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: log };
    const plan = join(ws.dir, "creds.plan.json");
    const runs = [
      await cli(["plan", "--out", plan, "-f", file], env),
      await cli(["apply", plan, "--json", "-f", file], env),
      await cli(["plan", "--json", "-f", file], env),
      await cli(["state", "history", "--json", "-f", file], env),
      await cli(["state", "claims", "-f", file], env),
      await cli(["state", "pull", "-f", file], env),
      await cli(["show", "--serial", "1", "--json", "-f", file], env),
    ];
    expectExit(runs[1]!, 0);
    // A server that refuses the connection, and one that refuses the password.
    const refusedUrl = new URL(fresh.db.url);
    refusedUrl.host = await refusedHostPort();
    const badPassword = new URL(fresh.db.url);
    badPassword.password = "not-the-password-" + fresh.db.password;
    runs.push(
      await cli(["plan", "-f", file], { ...env, DATABASE_URL: refusedUrl.href }),
      await cli(["plan", "-f", file], { ...env, DATABASE_URL: badPassword.href }),
    );
    expectExit(runs.at(-1)!, 1);
    expect(runs.at(-1)!.stderr).toContain("cannot open the state in PostgreSQL");
    const texts = [
      ...runs.flatMap((r) => [r.stdout, r.stderr]),
      await readFile(log, "utf8"),
      await readFile(plan, "utf8"),
    ];
    const history = await fresh.db.admin.query("SELECT state::text AS s, actor, host, operation FROM hostile.history");
    texts.push(JSON.stringify(history.rows));
    for (const t of texts) {
      expect(t).not.toContain(fresh.db.password);
      expect(t).not.toContain(encodeURIComponent(fresh.db.password));
    }
  });

  it(
    "state migrate --to postgres of a workspace that manages a grant another " +
      "stack claims there: refused before any workspace moves",
    async () => {
      const holder = await stackFile("holder", bindingYaml("viewers", rp("held"), VIEWER, ["user:h@example.com"]));
      expectExit(await cli(["apply", "--auto-approve", "-f", holder]), 0);
      // A local state (--backend local): default manages "mover"; dev (applied from an edited file) manages "held" too.
      const L = ["--backend", "local"];
      const file = await stackFile("mover", bindingYaml("own", rp("mover"), VIEWER, ["user:m@example.com"]));
      expectExit(await cli(["apply", "--auto-approve", ...L, "-f", file]), 0);
      expectExit(await cli(["workspace", "new", "dev", ...L, "-f", file]), 0);
      await stackFile("mover", bindingYaml("taken", rp("held"), VIEWER, ["user:h@example.com"]));
      expectExit(await cli(["apply", "--auto-approve", ...L, "-f", file]), 0);
      const refused = await cli(["state", "migrate", "--to", "postgres", ...L, "-f", file]);
      expectExit(refused, 1);
      expect(refused.stderr).toContain('which stack "holder" workspace "default" manages');
      // Nothing moved: both local states are where they were, none is on PostgreSQL.
      expect(existsSync(join(ws.dir, "state", "mover.json"))).toBe(true);
      expect(existsSync(join(ws.dir, "state", "mover.dev.json"))).toBe(true);
      expect(
        (await fresh.db.admin.query("SELECT count(*)::int AS n FROM hostile.states WHERE stack = 'mover'")).rows[0].n,
      ).toBe(0);
    },
  );
});
