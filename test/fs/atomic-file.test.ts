// The one atomic-write helper (state, saved plans, the emulator's world).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  removeTempLeftovers,
  tempPathFor,
  writeAll,
  writeFileAtomic,
  writeFileAtomicSync,
} from "../../src/fs/atomic-file.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "converge-atomic-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it(
    "replaces the file with mode 0600, runs beforeRename while the " + "old content is in place, leaves no temp file",
    async () => {
      const file = join(dir, "f.json");
      writeFileSync(file, "old", { mode: 0o644 });
      let seen = "";
      await writeFileAtomic(file, "new", { beforeRename: async () => void (seen = readFileSync(file, "utf8")) });
      expect(seen).toBe("old");
      expect(readFileSync(file, "utf8")).toBe("new");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(["f.json"]);
    },
  );

  it("keeps the old file and removes its temp file when the write fails before the rename", async () => {
    const file = join(dir, "f.json");
    writeFileSync(file, "old");
    await expect(writeFileAtomic(file, "new", { beforeRename: () => Promise.reject(new Error("no")) })).rejects.toThrow(
      "no",
    );
    expect(readFileSync(file, "utf8")).toBe("old");
    expect(readdirSync(dir)).toEqual(["f.json"]);
  });

  it("writes byte pieces one after another, across blocks of a megabyte and pieces larger than one", async () => {
    const file = join(dir, "big.json");
    const pieces = [
      Buffer.from("é{"),
      ...Array.from({ length: 3000 }, (_, i) => Buffer.alloc(1000 + (i % 7), 97 + (i % 26))),
      Buffer.alloc(3 << 20, 122),
      Buffer.alloc(0),
      Buffer.from("}\n"),
    ];
    await writeFileAtomic(file, pieces);
    expect(readFileSync(file).equals(Buffer.concat(pieces))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["big.json"]);
  });

  it("goes on after a short write, from the byte where the write stopped", async () => {
    // A file handle whose writev writes at most 5 bytes (0 on every third call).
    let out = Buffer.alloc(0);
    let calls = 0;
    const fh = {
      writev: async (pieces: readonly NodeJS.ArrayBufferView[]) => {
        const all = Buffer.concat(pieces.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
        const n = ++calls % 3 === 0 ? 0 : Math.min(5, all.length);
        out = Buffer.concat([out, all.subarray(0, n)]);
        return { bytesWritten: n, buffers: pieces };
      },
      writeFile: async (data: Uint8Array) => void (out = Buffer.concat([out, data])),
    };
    const pieces = [
      Buffer.from("abc"),
      Buffer.alloc(0),
      Buffer.from("défghij"),
      ...Array.from({ length: 2500 }, (_, i) => Buffer.from(`<${i}>`)),
    ];
    await writeAll(fh as never, pieces);
    expect(out.equals(Buffer.concat(pieces))).toBe(true);
  });

  it("has a synchronous twin with the same result", () => {
    const file = join(dir, "p.json");
    writeFileAtomicSync(file, "plan");
    expect(readFileSync(file, "utf8")).toBe("plan");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["p.json"]);
  });
});

describe("removeTempLeftovers", () => {
  it("removes temp files of dead writers (any kind), not this process's, not other files", async () => {
    const file = join(dir, "f.json");
    const dead = 999_999_999;
    const names = [
      `.f.json.tmp-${dead}-0a1b2c`,
      `.f.json.backup-tmp-${dead}-3d4e5f`,
      `.f.json.tmp-${process.pid}-abcdef`,
      ".g.json.tmp-999999999-0a1b2c",
      "f.json",
    ];
    for (const n of names) writeFileSync(join(dir, n), "x");
    await removeTempLeftovers(file);
    expect(readdirSync(dir).sort()).toEqual(names.slice(2).sort());
  });

  it("waits minAgeMs for a dead writer's file; removes any file older than maxAgeMs", async () => {
    const file = join(dir, "f.json");
    const young = `.f.json.tmp-999999999-0a1b2c`;
    const old = `.f.json.tmp-${process.ppid}-0a1b2c`;
    for (const n of [young, old]) writeFileSync(join(dir, n), "x");
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, old), hourAgo, hourAgo);
    await removeTempLeftovers(file, { minAgeMs: 60_000, maxAgeMs: 600_000 });
    expect(readdirSync(dir)).toEqual([young]);
  });

  it("names temp files so that it finds them", () => {
    expect(tempPathFor(join(dir, "f.json"))).toMatch(new RegExp(`/\\.f\\.json\\.tmp-${process.pid}-[0-9a-f]{12}$`));
  });
});
