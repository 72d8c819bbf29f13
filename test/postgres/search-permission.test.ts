// The test PostgreSQL set-up, as root, makes the way to the server's binaries searchable by the
// "postgres" user, and puts the modes back afterwards (a clean clone made with `mktemp -d` is 0700).
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { grantSearch } from "./search-permission.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

const mode = (p: string) => statSync(p).mode & 0o7777;

describe("grantSearch", () => {
  it("gives others search permission on the directories that lack it, and restores their modes", async () => {
    const top = mkdtempSync(join(tmpdir(), "search-")); // 0700, as mktemp -d makes it
    made.push(top);
    const mid = join(top, "node_modules");
    const bin = join(mid, "pkg", "bin");
    mkdirSync(bin, { recursive: true, mode: 0o755 });
    const { chmodSync } = await import("node:fs");
    chmodSync(mid, 0o750);
    const restore = await grantSearch(bin);
    expect(mode(top)).toBe(0o701);
    expect(mode(mid)).toBe(0o751);
    expect(mode(bin)).toBe(0o755);
    await restore();
    expect(mode(top)).toBe(0o700);
    expect(mode(mid)).toBe(0o750);
    expect(mode(bin)).toBe(0o755);
  });
});
