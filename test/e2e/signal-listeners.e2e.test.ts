// One abort signal is shared by every cloud call of a plan or an apply (Ctrl-C's, the prefetch's,
// an automation caller's). With more than ten calls waiting on it at once (ten in flight and one
// sleeping before a retry is enough), Node warned "MaxListenersExceededWarning: Possible
// EventTarget memory leak detected" on the user's terminal, and in an automation caller's process.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack } from "../../src/automation/automation.js";
import { RestorePlanIamBinding } from "../../src/sdk/resources.js";
import { refusedHostPort, runCli } from "./helpers.js";

const POLICIES = 30;
let dir: string;
let refused: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "converge-listeners-"));
  // A port nothing listens on: every call fails with ECONNREFUSED and is retried.
  refused = await refusedHostPort();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stackText = (name: string) =>
  `name: ${name}\nprovider:\n  project: p1\n  location: us-central1\nresources:\n` +
  Array.from(
    { length: POLICIES },
    (_, i) =>
      `  r${i}:\n    type: cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n      name: rp${i}` +
      `\n      role: roles/viewer\n      members: [user:u${i}@example.com]\n`,
  ).join("");

describe("a signal shared by many calls", () => {
  it("the CLI: a plan whose reads are all retried prints no listener-leak warning", async () => {
    const file = join(dir, "stack.yaml");
    await writeFile(file, stackText("listeners"));
    const r = await runCli(["plan", "-f", file, "--state", join(dir, "state.json"), "--call-timeout", "1s"], {
      emulatorHost: refused,
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ECONNREFUSED/);
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning|memory leak/);
  }, 90_000);

  it("the automation API: a caller's signal given to plan() gets no listener-leak warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const stack = await Stack.inline(
        "listeners-sdk",
        (s) => {
          s.provider = { project: "p1", location: "us-central1", endpoint: `http://${refused}` };
          for (let i = 0; i < POLICIES; i++)
            new RestorePlanIamBinding(`r${i}`, {
              name: `rp${i}`,
              role: "roles/viewer",
              members: [`user:u${i}@example.com`],
            });
        },
        { dir, callTimeoutMs: 1_000 },
      );
      const plan = await stack.plan({ signal: new AbortController().signal });
      expect(plan.errored).toBe(true);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  }, 90_000);
});
