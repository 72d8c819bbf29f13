// The one check of a file an option writes (writablePath), and the directory and temp-file helpers
// it relies on: mkdir -p under /proc fails instead of looping for ever, and a temp file beside a
// file with a long (but valid) name has a valid name too.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempPathFor, writeFileAtomicSync } from "../../src/fs/atomic-file.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { makeDirs, makeDirsSync, writablePath } from "../../src/fs/regular-files.js";
import { useTempDir } from "../e2e/helpers.js";

const ROLE = { what: "test file", detail: "" };
const ws = useTempDir("converge-writable-");

describe("writablePath", () => {
  it("returns the path of a file that can be written, and leaves no probe behind", async () => {
    expect(await writablePath(join(ws.dir, "a", "b", "f.json"), ROLE)).toBe(join(ws.dir, "a", "b", "f.json"));
    expect(existsSync(join(ws.dir, "a"))).toBe(false);
    expect(readdirSync(ws.dir).filter((n) => n.includes("probe"))).toEqual([]);
  });

  it("refuses /proc, a path under a file and an empty path with a user error naming the path", async () => {
    writeFileSync(join(ws.dir, "file"), "x");
    for (const [path, reason] of [
      ["/proc/version", "/proc does not take new files"],
      ["/proc/x/y/f.json", "/proc does not take new files"],
      [join(ws.dir, "file", "f.json"), `${join(ws.dir, "file")} is not a directory`],
      [join(ws.dir, "file", "a", "f.json"), `${join(ws.dir, "file")} is not a directory`],
      [join(ws.dir, "n".repeat(256)), "ENAMETOOLONG: name too long"],
    ]) {
      const e = await writablePath(path!, ROLE).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).message).toContain(`cannot write test file ${path}`);
      expect((e as UserError).message).toContain(reason);
    }
    await expect(writablePath("", ROLE)).rejects.toThrow("path is empty");
  });
});

describe("makeDirs under /proc", () => {
  it("fails with ENOENT instead of looping for ever (Node's recursive mkdir does)", async () => {
    await expect(makeDirs("/proc/converge-test/a/b")).rejects.toMatchObject({ code: "ENOENT" });
    expect(() => makeDirsSync("/proc/converge-test/a/b")).toThrow(/ENOENT/);
  }, 10_000);
});

describe("tempPathFor", () => {
  it("keeps a temp file's name within 255 bytes beside a file whose name is 255 bytes", () => {
    const file = join(ws.dir, "é".repeat(127) + "x");
    const tmp = tempPathFor(file, "backup-tmp");
    expect(Buffer.byteLength(tmp.slice(ws.dir.length + 1))).toBeLessThanOrEqual(255);
    writeFileAtomicSync(file, "ok\n");
    expect(existsSync(file)).toBe(true);
  });
});
