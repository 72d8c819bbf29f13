// `.apply` on a value known only during apply, as Pulumi runs it: `plan` shows the result as
// "(known after apply)" without running the function; `apply` runs it once the value is known and
// its result is the stack output (secret when its source is). A resource input computed that way
// is an error at the constructor: converge plans every resource before apply starts.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";
import { packageDir } from "./pulumi-helpers.js";

const NIGHTLY = "projects/my-project/locations/us-central1/restorePlans/nightly";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: NIGHTLY }],
} as EmulatorWorld;
const SLOW = 300_000;
const ws = useEmulatorWorkspace(SEED, "converge-pulumi-apply-later-");

const HEAD = `import { appendFileSync } from "node:fs";
import * as pulumi from "converge-iam/pulumi";
import * as gcp from "converge-iam/google-native";

const viewers = new gcp.gkebackup.v1.RestorePlanIamBinding("viewers", {
  name: "${NIGHTLY}",
  role: "roles/gkebackup.viewer",
  members: ["user:carol@example.com"],
});
`;

const OUTPUTS = `${HEAD}
export const etagNote = viewers.etag.apply((e) => {
  appendFileSync("ran.txt", "etagNote\\n");
  return { length: e.length, text: \`etag \${e}\` };
});
export const etagText = etagNote.text;
export const sealed = pulumi.secret(viewers.etag).apply((e) => \`sealed:\${e}\`);
`;

const INPUT = `${HEAD}
const member = viewers.etag.apply((e) => \`user:\${e.length}@example.com\`);
new gcp.gkebackup.v1.RestorePlanIamMember("later", {
  name: "${NIGHTLY}",
  role: "roles/gkebackup.admin",
  member,
});
`;

const ENV = { GOOGLE_PROJECT: "my-project", GOOGLE_REGION: "us-central1" };
const cli = (dir: string, ...args: string[]) =>
  runCli([...args, "-f", "index.ts"], { cwd: dir, emulator: ws.emu, env: ENV, timeoutMs: 90_000 });

describe(".apply on a value known only during apply", () => {
  it(
    "plan shows it as known after apply without running it; apply runs it and records its result",
    async () => {
      const dir = await packageDir(ws.dir, "outputs", { "index.ts": OUTPUTS });
      const plan = await cli(dir, "plan");
      expectExit(plan, 0);
      expect(plan.stdout).toMatch(/etagNote\s*=\s*\(known after apply\)/);
      expect(existsSync(join(dir, "ran.txt"))).toBe(false);
      const applied = await cli(dir, "apply", "--auto-approve");
      expectExit(applied, 0);
      const state = JSON.parse(await readFile(join(dir, "state", "index.json"), "utf8")) as State;
      const etag = state.resources.find((r) => r.address === "viewers")?.outputs?.etag as string;
      expect(etag).toBeTruthy();
      expect(state.outputs).toEqual({
        etagNote: { length: etag.length, text: `etag ${etag}` },
        etagText: `etag ${etag}`,
        sealed: `sealed:${etag}`,
      });
      expect(state.sensitive_outputs).toEqual(["sealed"]);
      expect(applied.stdout).not.toContain(`sealed:${etag}`);
      // The function ran during apply only, once for the output and its property.
      expect(await readFile(join(dir, "ran.txt"), "utf8")).toBe("etagNote\n");
    },
    SLOW,
  );

  it(
    "a resource input computed by it is an error at the constructor",
    async () => {
      const dir = await packageDir(ws.dir, "input", { "index.ts": INPUT });
      const r = await cli(dir, "plan");
      expectExit(r, 1);
      expect(r.stderr).toMatch(/index\.ts:12:\d+/);
      expect(r.stderr).toContain('resource "later" takes a value from .apply(…) on a value known only during apply');
    },
    SLOW,
  );
});
