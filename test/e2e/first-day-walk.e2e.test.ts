// A platform engineer's first day, walked end to end through the real CLI (issue 38, "Done when"):
// one stack for dev and prod (a workspace each) with its project from an input in `provider:`, a var file shared with
// another stack (its other key a warning), forEach over teams, a conditional binding, a saved plan
// applied with `apply FILE` and no input given again, the access summary naming who gains and who
// loses access, and a proxy that refuses the tunnel reported as a proxy error.
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";
import { membersOf, policyIn } from "./apply-helpers.js";

const rp = (env: string, id: string) => `projects/acme-${env}/locations/us-central1/restorePlans/${id}`;
const SEED: EmulatorWorld = {
  projects: { "acme-dev": { number: "111111111111" }, "acme-prod": { number: "222222222222" } },
  restorePlans: ["dev", "prod"].flatMap((env) => [
    {
      name: rp(env, "nightly"),
      policy: { bindings: [{ role: "roles/gkebackup.viewer", members: ["user:intern@acme.example"] }] },
    },
    { name: rp(env, "weekly"), policy: { bindings: [] } },
  ]),
};

const STACK = `name: backups
provider:
  project: acme-\${env}
  location: us-central1
config:
  env:
    type: string
  teams:
    type: map
  oncall:
    type: string
resources:
  team-viewers:
    type: cloudnative:backup/v1:RestorePlanIamMember
    options:
      forEach: \${teams}
    properties:
      name: \${each.value}
      role: roles/gkebackup.backupAdmin
      member: group:\${each.key}@acme.example
  nightly-viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [group:data@acme.example]
  oncall-admin:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties:
      name: weekly
      role: roles/gkebackup.admin
      member: user:\${oncall}
      condition:
        title: until 2027
        expression: request.time < timestamp("2027-01-01T00:00:00Z")
`;

const ws = useEmulatorWorkspace(SEED, "converge-first-day-walk-");
let proxy: Server;
let proxyUrl: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  // A corporate proxy whose policy refuses every tunnel (CONNECT), as one that wants credentials.
  proxy = createServer((_req, res) => res.writeHead(403).end());
  proxy.on(
    "connect",
    (_req, client: Socket) =>
      void client.end("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"),
  );
  proxy.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => proxy.close(r));
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: ws.dir, emulator: ws.emu, env, timeoutMs: 60_000 });

describe("the first day", { timeout: 240_000 }, () => {
  const title =
    "dev and prod from one stack, a shared var file, forEach, a condition, a saved plan, access, a refusing proxy";
  it(title, async () => {
    await writeFile(join(ws.dir, "stack.yaml"), STACK);
    // Shared with the team's other stack, which has a `region` input this one does not.
    await writeFile(
      join(ws.dir, "common.yaml"),
      "teams:\n  data: nightly\n  ml: weekly\noncall: ana@acme.example\nregion: europe-west1\n",
    );

    const validate = await cli(["validate"]);
    expectExit(validate, 0);

    for (const env of ["dev", "prod"]) {
      // One state per environment, as Terraform's workspaces keep them.
      expectExit(await cli(["workspace", "new", env]), 0);
      const out = `${env}.plan`;
      const plan = await cli(["plan", "--var-file", "common.yaml", "--var", `env=${env}`, "--out", out]);
      expectExit(plan, 0);
      expect(plan.stderr).toContain('Warning: unknown input "region"');
      expect(plan.stdout).toContain(`${rp(env, "nightly")}`);
      expect(plan.stdout).toContain('  # team-viewers["data"] will be created');
      // As Terraform: the block names the resource, the heading its instance (no quotes in quotes).
      expect(plan.stdout).toContain('  + resource "cloudnative:backup/v1:RestorePlanIamMember" "team-viewers" {');
      expect(plan.stdout).not.toContain('"team-viewers[');
      // The access summary: who gains and who loses, the authoritative binding's revocation named.
      expect(plan.stdout).toContain("Access: 4 granted, 1 revoked");
      expect(plan.stdout).toMatch(/\+ group:ml@acme\.example gains roles\/gkebackup\.backupAdmin on .*weekly/);
      expect(plan.stdout).toMatch(
        /\+ user:ana@acme\.example gains roles\/gkebackup\.admin if "until 2027" on .*weekly/,
      );
      expect(plan.stdout).toMatch(/- user:intern@acme\.example loses roles\/gkebackup\.viewer on .*nightly/);
      expect(plan.stdout).toContain(`converge apply ${out}`);
      if (env === "prod") continue;
      // The saved plan carries its inputs: apply FILE needs none of them again.
      const applied = await cli(["apply", out]);
      expectExit(applied, 0);
      expect(applied.stdout).toContain("Apply complete! Resources: 4 added, 0 changed, 0 destroyed.");
    }
    const live = await world(ws.emu);
    expect(membersOf(policyIn(live, rp("dev", "nightly")), "roles/gkebackup.viewer")).toEqual([
      "group:data@acme.example",
    ]);
    expect(membersOf(policyIn(live, rp("dev", "weekly")), "roles/gkebackup.admin", "until 2027")).toEqual([
      "user:ana@acme.example",
    ]);
    expect(membersOf(policyIn(live, rp("prod", "nightly")), "roles/gkebackup.viewer")).toEqual([
      "user:intern@acme.example",
    ]);

    // At the office, behind the proxy, against Google's endpoint: the proxy's refusal is named.
    const offline = await runCli(["plan", "--var-file", "common.yaml", "--var", "env=prod", "--workspace", "prod"], {
      cwd: ws.dir,
      env: { HTTPS_PROXY: proxyUrl, NO_PROXY: "", CLOUDNATIVE_ACCESS_TOKEN: "t0ken-for-the-test" },
      timeoutMs: 60_000,
    });
    expectExit(offline, 1);
    expect(offline.stderr).toContain(`the proxy ${proxyUrl} refused the tunnel to gkebackup.googleapis.com:443: 407`);
    expect(offline.stderr).not.toMatch(/does not exist|PERMISSION_DENIED/);
  });
});
