// A writer killed after making the backup (a hard link to the current state) and before replacing
// the state leaves `{state}.backup` and the state as one file. The next write's backup rename is
// then between two links of one file, which rename(2) does without removing the temp name: the
// temp file was left behind (with the live writer's pid, so never swept: crash.test.ts saw it).
import { link, rm } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localStateStore, newState } from "../../src/state/index.js";
import { overwrite, resource, tempDir } from "./helpers.js";

describe("the state backup", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it(
    "leaves no temp file when the backup already is the state file " + "(a writer killed between the two renames)",
    async () => {
      const file = join(dir, "s.json");
      const store = localStateStore(file);
      let s = await overwrite(store, { ...newState("s"), resources: [resource("a")] });
      s = await overwrite(store, { ...s, resources: [resource("b")] });
      // What the killed writer left: the backup made (a link to the state), the state not replaced.
      await rm(`${file}.backup`);
      await link(file, `${file}.backup`);
      const next = await overwrite(store, { ...s, resources: [resource("c")] });
      expect(next.serial).toBe(s.serial + 1);
      expect(readdirSync(dir).sort()).toEqual(["s.json", "s.json.backup"]);
      expect((await store.read())!.resources.map((r) => r.address)).toEqual(["c"]);
    },
  );
});
