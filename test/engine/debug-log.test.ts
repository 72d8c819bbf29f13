import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { debugLine, debugLogger } from "../../src/connect/debug-log.js";

const RP = "projects/p/locations/us-central1/restorePlans/a";
const attempt = {
  type: "attempt",
  methodId: "gkebackup.projects.locations.restorePlans.getIamPolicy",
  resource: RP,
  attempt: 1,
  maxAttempts: 10,
  ms: 12.4,
} as const;

describe("debug log", () => {
  it("says what was called and what came back", () => {
    expect(debugLine({ ...attempt, status: "OK", httpStatus: 200, retry: false })).toBe(
      `getIamPolicy ${RP}: 200 OK in 12 ms (attempt 1 of 10)`,
    );
    expect(debugLine({ ...attempt, status: "UNAVAILABLE", httpStatus: 503, retry: true, delayMs: 420 })).toBe(
      `getIamPolicy ${RP}: 503 UNAVAILABLE in 12 ms (attempt 1 of 10); retrying in 0.4s`,
    );
    expect(debugLine({ ...attempt, status: "DEADLINE_EXCEEDED", httpStatus: 0, retry: false })).toBe(
      `getIamPolicy ${RP}: no response DEADLINE_EXCEEDED in 12 ms (attempt 1 of 10)`,
    );
    expect(
      debugLine({
        type: "policy",
        kind: "restorePlan",
        resource: RP,
        round: 1,
        maxRounds: 12,
        outcome: "aborted",
        delayMs: 30,
      }),
    ).toBe(`read-modify-write ${RP}: round 1 of 12: etag conflict (409 ABORTED); again in 0.0s`);
    expect(
      debugLine({ type: "policy", kind: "restorePlan", resource: RP, round: 2, maxRounds: 12, outcome: "written" }),
    ).toBe(`read-modify-write ${RP}: round 2 of 12: written`);
  });

  it("is off unless CONVERGE_LOG asks, and CONVERGE_LOG_PATH gets a 0600 file", () => {
    for (const v of [undefined, "", "off", "0", "false", "OFF"])
      expect(debugLogger({ CONVERGE_LOG: v })).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), "converge-log-"));
    try {
      const path = join(dir, "converge.log");
      const log = debugLogger({ CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: path })!;
      log({ ...attempt, status: "OK", httpStatus: 200, retry: false });
      expect(readFileSync(path, "utf8")).toMatch(
        new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\[DEBUG\\] getIamPolicy ${RP}: 200 OK`),
      );
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(() => debugLogger({ CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: join(dir, "missing", "x.log") })).toThrow(
        /CONVERGE_LOG_PATH: cannot write the debug log/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("neutralises control characters in what it logs (names come from the stack and the server)", () => {
    const dir = mkdtempSync(join(tmpdir(), "converge-log-"));
    try {
      const path = join(dir, "converge.log");
      const log = debugLogger({ CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: path })!;
      log({
        ...attempt,
        resource: `${RP}\x1b[2J\r\nApply complete!\u202e`,
        status: "OK",
        httpStatus: 200,
        retry: false,
      });
      expect(readFileSync(path, "utf8")).toMatch(
        new RegExp(
          String.raw`\[DEBUG\] getIamPolicy projects\/p\/locations\/us-central1\/restorePlans\/a\\x1b\[2J\\r` +
            String.raw`\\nApply complete!\\u202e: 200 OK in 12 ms \(attempt 1 of 10\)\n$`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A FIFO would block the open (and every write) for ever; a device would be chmodded and written
  // to; a directory cannot take a log. Each is refused at once, untouched.
  for (const kind of ["fifo", "dir", "/dev/null"] as const) {
    it(
      `CONVERGE_LOG_PATH that ` +
        `${kind === "fifo" ? "is a FIFO" : kind === "dir" ? "is a directory" : `links to ${kind}`}` +
        ` is refused, untouched`,
      () => {
        const dir = mkdtempSync(join(tmpdir(), "converge-log-"));
        const path = join(dir, "converge.log");
        const devMode = statSync("/dev/null").mode;
        try {
          if (kind === "fifo") execFileSync("mkfifo", [path]);
          else if (kind === "dir") mkdirSync(path);
          else symlinkSync(kind, path);
          const what =
            kind === "fifo"
              ? "is a FIFO (named pipe)"
              : kind === "dir"
                ? "is a directory"
                : "links to /dev/null, which is a character device";
          expect(() => debugLogger({ CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: path })).toThrow(
            `CONVERGE_LOG_PATH: the debug log ${path} ${what}, not a regular file`,
          );
          expect(statSync("/dev/null").mode).toBe(devMode); // never chmodded
          if (kind === "fifo") expect(lstatSync(path).isFIFO()).toBe(true);
        } finally {
          // Old code chmodded the device: put it back.
          if (statSync("/dev/null").mode !== devMode)
            execFileSync("chmod", [(devMode & 0o7777).toString(8), "/dev/null"]);
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );
  }
});
