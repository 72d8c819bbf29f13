import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { debugLine, debugLogger } from "../../src/engine/debug-log.js";

const RP = "projects/p/locations/us-central1/restorePlans/a";
const attempt = { type: "attempt", methodId: "gkebackup.projects.locations.restorePlans.getIamPolicy", resource: RP, attempt: 1, maxAttempts: 10, ms: 12.4 } as const;

describe("debug log", () => {
  it("says what was called and what came back", () => {
    expect(debugLine({ ...attempt, status: "OK", httpStatus: 200, retry: false })).toBe(`getIamPolicy ${RP}: 200 OK in 12 ms (attempt 1 of 10)`);
    expect(debugLine({ ...attempt, status: "UNAVAILABLE", httpStatus: 503, retry: true, delayMs: 420 })).toBe(`getIamPolicy ${RP}: 503 UNAVAILABLE in 12 ms (attempt 1 of 10); retrying in 0.4s`);
    expect(debugLine({ ...attempt, status: "DEADLINE_EXCEEDED", httpStatus: 0, retry: false })).toBe(`getIamPolicy ${RP}: no response DEADLINE_EXCEEDED in 12 ms (attempt 1 of 10)`);
    expect(debugLine({ type: "policy", kind: "restorePlan", resource: RP, round: 1, maxRounds: 12, outcome: "aborted", delayMs: 30 })).toBe(`read-modify-write ${RP}: round 1 of 12: etag conflict (409 ABORTED); again in 0.0s`);
    expect(debugLine({ type: "policy", kind: "restorePlan", resource: RP, round: 2, maxRounds: 12, outcome: "written" })).toBe(`read-modify-write ${RP}: round 2 of 12: written`);
  });

  it("is off unless CONVERGE_LOG asks, and CONVERGE_LOG_PATH gets a 0600 file", () => {
    for (const v of [undefined, "", "off", "0", "false", "OFF"]) expect(debugLogger({ CONVERGE_LOG: v })).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), "converge-log-"));
    try {
      const path = join(dir, "converge.log");
      const log = debugLogger({ CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: path })!;
      log({ ...attempt, status: "OK", httpStatus: 200, retry: false });
      expect(readFileSync(path, "utf8")).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\[DEBUG\\] getIamPolicy ${RP}: 200 OK`));
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(() => debugLogger({ CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: join(dir, "missing", "x.log") })).toThrow(/CONVERGE_LOG_PATH: cannot write the debug log/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
