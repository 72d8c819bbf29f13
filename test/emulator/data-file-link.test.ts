// The emulator's data file behind a symlink is written where the link points; the link stays
// (before, each persist renamed a temp file over the link, turning it into a plain file).
import { lstatSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { PROJECT, RP } from "../fixtures/builders.js";
import { setPolicyOutOfBand, startSeededEmulator, useTempDir } from "../e2e/helpers.js";

const SEED = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [{ name: RP, policy: { bindings: [] } }],
};
const ws = useTempDir("converge-emu-link-");

describe("emulator data file behind a symlink", () => {
  it("is written where the link points, and the link stays", async () => {
    const target = join(ws.dir, "world.json");
    const link = join(ws.dir, "link.json");
    writeFileSync(target, JSON.stringify(SEED));
    symlinkSync("world.json", link);
    const emu = await startSeededEmulator({}, { dataFile: link });
    try {
      const binding = { role: "roles/gkebackup.viewer", members: ["user:linked@example.com"] };
      await setPolicyOutOfBand(emu, RP, (p) => ({ ...p, bindings: [binding] }));
    } finally {
      await emu.close();
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("world.json");
    const world = JSON.parse(readFileSync(target, "utf8")) as EmulatorWorld;
    expect(world.restorePlans?.[0]?.policy?.bindings?.[0]?.members).toEqual(["user:linked@example.com"]);
  });
});
