// Issue 13, item 4: a plan fails where apply would fail. A resource whose object does not exist
// (NOT_FOUND on refresh) or whose policy the caller may not read (PERMISSION_DENIED) is an error
// at plan time, positioned at its `name`, and apply stops before any write.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, ep, memberYaml, rp, setCalls, stateExists, stackHead } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: {
    "my-project": { number: "123456789012" },
    "closed-project": {
      number: "210987654321",
      callers: { "ci-token": "user:ci@example.com" },
      iamAdmins: ["user:admin@example.com"],
    },
  },
  restorePlans: [
    { name: rp("nightly"), policy: { bindings: [] } },
    { name: "projects/closed-project/locations/us-central1/restorePlans/audit", policy: { bindings: [] } },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-plan-fails-early-");

const cases = [
  {
    what: "a member on an endpoint that does not exist",
    resource: memberYaml("invoker", "nosuch", "roles/aiplatform.user", "user:bob@example.com"),
    message: `invoker: endpoint ${ep("nosuch")} does not exist`,
  },
  {
    what: "a binding on a restore plan the caller may not read",
    resource: bindingYaml(
      "audit",
      "projects/closed-project/locations/us-central1/restorePlans/audit",
      "roles/gkebackup.viewer",
      ["user:bob@example.com"],
    ),
    message: "audit: cannot read the IAM policy of projects/closed-project/locations/us-central1/restorePlans/audit",
  },
];

describe("plans fail where apply would fail", () => {
  it.each(cases)(
    "$what: plan and apply exit 1 at plan time, at its name, with no write",
    async ({ resource, message }) => {
      const stackFile = join(ws.dir, "stack.yaml");
      const statePath = join(ws.dir, "state", "early.json");
      // A valid resource first: apply must not write it either.
      await writeFile(
        stackFile,
        stackHead("early") +
          bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
          resource,
      );
      const line =
        (await readFile(stackFile, "utf8"))
          .split("\n")
          .findIndex((l) => l.includes("nosuch") || l.includes("closed-project")) + 1;
      for (const command of [["plan"], ["apply", "--auto-approve"]]) {
        await resetStats(ws.emu);
        const r = await runCli([...command, "-f", stackFile, "--state", statePath], {
          cwd: ws.dir,
          emulator: ws.emu,
          env: { CLOUDNATIVE_ACCESS_TOKEN: "ci-token" },
        });
        expectExit(r, 1);
        expect(r.stderr).toContain(message);
        expect(r.stderr).toContain(`stack.yaml:${line}:`);
        expect(r.stderr).not.toContain("internal error");
        expect(setCalls(await stats(ws.emu))).toBe(0);
        expect(stateExists(statePath)).toBe(false);
      }
    },
  );
});
