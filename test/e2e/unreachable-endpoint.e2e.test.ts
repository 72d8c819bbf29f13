// A plan against an endpoint nothing listens on (a wrong CLOUDNATIVE_EMULATOR_HOST, an offline
// laptop): once a few calls have found it unreachable, the remaining reads fail at once, unsent.
// Before, every one of the 120 reads retried for its whole call timeout; then each was its own
// error saying the same thing (12,000 errors for a 100,000-resource stack): now they are one.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusedHostPort, runCli } from "./helpers.js";

const POLICIES = 120;
let dir: string;
let refused: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "converge-unreachable-"));
  // A port nothing listens on: every call fails with ECONNREFUSED and is retried.
  refused = await refusedHostPort();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("an unreachable endpoint", () => {
  it(
    "a plan reports the policies it could not read as one error, and stops " +
      "sending once the endpoint is found unreachable",
    async () => {
      const file = join(dir, "stack.yaml");
      await writeFile(
        file,
        `name: unreachable\nprovider:\n  project: p1\n  location: us-central1\nresources:\n` +
          Array.from(
            { length: POLICIES },
            (_, i) =>
              `  r${i}:\n    type: cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n      name: ` +
              `rp${i}\n      role: roles/gkebackup.viewer\n      members: [user:u${i}@example.com]\n`,
          ).join(""),
      );
      const r = await runCli(["plan", "-f", file, "--state", join(dir, "state.json"), "--call-timeout", "3s"], {
        emulatorHost: refused,
        timeoutMs: 120_000,
      });
      expect(r.code).toBe(1);
      expect(r.stderr.match(/Error: /g)).toHaveLength(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `stack\\.yaml:\\d+:\\d+: Error: no connection to the API: ${POLICIES} IAM ` +
            `policies \\(${POLICIES} resources\\) were not read`,
        ),
      );
      expect(r.stderr).toMatch(/ECONNREFUSED/);
      expect(r.stderr).toMatch(
        new RegExp(`Not read: projects/p1/locations/us-central1/restorePlans/rp\\d+, .* and ${POLICIES - 5} more`),
      );
      // Sent: the first 10 (as many as run at once), and the 2 that took the slots of the first two
      // to end before the third did; the rest were not sent (each sent read retries up to 9 times).
      const retries = (r.stdout + r.stderr).match(/retrying in/g) ?? [];
      expect(retries.length).toBeLessThanOrEqual(12 * 9);
    },
    150_000,
  );
});
