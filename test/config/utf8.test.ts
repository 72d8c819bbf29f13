// Issue 12, class 2: stack files are decoded as strict UTF-8; the first byte that is not UTF-8
// is reported at its line and column (src/base/utf8.ts), through loadStackFile too.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadStackFile } from "../../src/config/load.js";
import { decodeUtf8, firstInvalidUtf8 } from "../../src/base/utf8.js";

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...Buffer.from(p, "utf8")] : p)));

describe("decodeUtf8", () => {
  it("decodes well-formed text as is, a byte order mark included", () => {
    expect(decodeUtf8(bytes("name: caf\u00e9 \u{1F600}\n"))).toEqual({ ok: true, text: "name: caf\u00e9 \u{1F600}\n" });
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], "name: t\n"))).toEqual({ ok: true, text: "\uFEFFname: t\n" });
  });

  it.each([
    ["a Latin-1 byte", [0xe9]],
    ["a lone continuation byte", [0x80]],
    ["an overlong encoding of /", [0xc0, 0xaf]],
    ["a UTF-16 surrogate", [0xed, 0xa0, 0x80]],
    ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
    ["a truncated sequence", [0xe2, 0x82]],
    ["a byte that is never UTF-8", [0xff]],
  ])("%s: its first byte, at line and column counted in characters", (_, bad) => {
    const r = decodeUtf8(bytes("name: t\n# \u00e9t\u00e9 \u{1F600}\nx: ab", bad, "cd\n"));
    // line 3 "x: ab" is 5 characters: the bad sequence is the 6th
    expect(r).toEqual({
      ok: false,
      invalid: {
        offset: Buffer.byteLength("name: t\n# \u00e9t\u00e9 \u{1F600}\nx: ab"),
        byte: bad[0],
        line: 3,
        column: 6,
      },
    });
  });

  it("firstInvalidUtf8 agrees with the strict decoder on random bytes", () => {
    const fatal = new TextDecoder("utf-8", { fatal: true });
    for (let n = 0; n < 2000; n++) {
      const b = Uint8Array.from({ length: 1 + (n % 12) }, (_, i) => ((n * 7919 + i * 104729) ^ (n >> 3)) & 0xff);
      let ok = true;
      try {
        fatal.decode(b);
      } catch {
        ok = false;
      }
      expect(firstInvalidUtf8(b) < 0, Buffer.from(b).toString("hex")).toBe(ok);
    }
  });
});

describe("loadStackFile on a file that is not UTF-8", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "converge-utf8-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("is one error at the bad byte, not a stack holding U+FFFD", async () => {
    const file = join(dir, "latin1.yaml");
    await writeFile(file, bytes('name: t\nvariables:\n  who: "Ren', [0xe9], '"\n'));
    const r = loadStackFile(file);
    expect(r.stack).toBeUndefined();
    expect(r.diagnostics).toEqual([
      expect.objectContaining({
        severity: "error",
        file,
        line: 3,
        column: 12,
        summary: expect.stringContaining("not valid UTF-8: byte 0xE9"),
      }),
    ]);
  });
});
