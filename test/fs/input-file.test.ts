// The one way converge reads a file the user gives it (stack, --var-file, seed, saved plan, state
// to push): only a regular file, and at most a cap of bytes. A FIFO is never waited on, a device
// never read, a file over the cap never read whole.
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkInputFile,
  InputFileError,
  MAX_DATA_BYTES,
  MAX_SOURCE_BYTES,
  readInputFile,
} from "../../src/fs/input-file.js";

const dir = mkdtempSync(join(tmpdir(), "converge-input-file-"));
const fifos: string[] = [];
afterAll(() => {
  // A reader blocked on a FIFO (old code) gets EOF once a writer opens and closes it.
  for (const f of fifos) {
    try {
      closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // no reader
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function refusal(fn: () => unknown): InputFileError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputFileError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("readInputFile", () => {
  it("reads a regular file, and one that a symlink leads to", () => {
    const f = join(dir, "ok.yaml");
    writeFileSync(f, "name: ok\n");
    symlinkSync(f, join(dir, "ok-link.yaml"));
    expect(readInputFile(f, "stack file", MAX_SOURCE_BYTES).toString()).toBe("name: ok\n");
    expect(readInputFile(join(dir, "ok-link.yaml"), "stack file", MAX_SOURCE_BYTES).toString()).toBe("name: ok\n");
    expect(readInputFile(join(dir, "ok.yaml"), "stack file", 9).toString()).toBe("name: ok\n"); // exactly the cap
  });

  it("refuses a FIFO at once (never waits for a writer)", () => {
    const fifo = join(dir, "fifo.yaml");
    execFileSync("mkfifo", [fifo]);
    fifos.push(fifo);
    const e = refusal(() => readInputFile(fifo, "stack file", MAX_SOURCE_BYTES));
    expect(e.message).toBe(`stack file ${fifo} is a FIFO (named pipe), not a regular file`);
    expect(e.problem).toBe("is a FIFO (named pipe), not a regular file");
    expect(e.detail).toMatch(/regular file/);
    expect(refusal(() => checkInputFile(fifo, "seed file", MAX_SOURCE_BYTES)).message).toBe(
      `seed file ${fifo} is a FIFO (named pipe), not a regular file`,
    );
  });

  it("refuses /dev/zero, a link to it and a directory", () => {
    expect(refusal(() => readInputFile("/dev/zero", "--var-file", MAX_SOURCE_BYTES)).message).toBe(
      "--var-file /dev/zero is a character device, not a regular file",
    );
    symlinkSync("/dev/zero", join(dir, "zero.json"));
    expect(refusal(() => readInputFile(join(dir, "zero.json"), "the saved plan", MAX_DATA_BYTES)).message).toBe(
      `the saved plan ${join(dir, "zero.json")} links to /dev/zero, which is a character device, not a regular file`,
    );
    mkdirSync(join(dir, "adir"));
    expect(refusal(() => readInputFile(join(dir, "adir"), "stack file", MAX_SOURCE_BYTES)).message).toBe(
      `stack file ${join(dir, "adir")} is a directory, not a regular file`,
    );
  });

  it("refuses a file over the cap without reading it, naming the cap", () => {
    const big = join(dir, "big.yaml");
    writeFileSync(big, "x".repeat(11));
    expect(refusal(() => readInputFile(big, "stack file", 10)).message).toBe(
      `stack file ${big} is larger than 10 bytes, the most converge reads`,
    );
    const sparse = join(dir, "sparse.json");
    closeSync(openSync(sparse, "w"));
    execFileSync("truncate", ["-s", String(MAX_DATA_BYTES + 1), sparse]);
    const e = refusal(() => readInputFile(sparse, "state file", MAX_DATA_BYTES));
    expect(e.message).toBe(`state file ${sparse} is larger than 500 MiB, the most converge reads`);
    expect(refusal(() => checkInputFile(sparse, "seed file", MAX_SOURCE_BYTES)).message).toBe(
      `seed file ${sparse} is larger than 64 MiB, the most converge reads`,
    );
  });

  it("leaves a missing file to the caller (ENOENT as thrown by fs)", () => {
    expect(() => readInputFile(join(dir, "absent.yaml"), "stack file", MAX_SOURCE_BYTES)).toThrow(
      expect.objectContaining({ code: "ENOENT" }),
    );
  });

  it("gives a UserError naming the file", () => {
    const e = refusal(() => readInputFile("/dev/zero", "stack file", MAX_SOURCE_BYTES));
    expect(e.userError().diagnostics[0]).toMatchObject({
      severity: "error",
      summary: e.message,
      file: "/dev/zero",
      detail: e.detail,
    });
  });
});
