// `{state}.backup` is the previous version of *this* state. A backup of another lineage found
// there (a deleted workspace's last state, the state an old file held before --state named a new
// one at its path, an unreadable file) is the only copy of that state: no write replaces it. The
// state store moves it aside to {state}.deleted-{lineage}-{serial}[-N].backup (mode 0600) before
// it backs up the current version, and `workspace delete` does the same before keeping the state
// as the backup.
import { existsSync, readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { State } from "../../src/generated/schemas.js";
import { openStateStore } from "../../src/state/factory.js";
import { localStateStore, newState, serializeState } from "../../src/state/index.js";
import { mode, overwrite, resource, tempDir } from "./helpers.js";

const OTHER: State = {
  ...newState("s"),
  lineage: "0f0f0f0f-1111-2222-3333-444455556666",
  serial: 7,
  resources: [resource("old")],
};

describe("a .backup of another lineage", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it("beside a new state file is moved aside, not replaced, by the write that backs up the new state", async () => {
    const file = join(dir, "s.json");
    const old = serializeState(OTHER);
    await writeFile(`${file}.backup`, old);
    const store = localStateStore(file);
    let s = await overwrite(store, { ...newState("s"), resources: [resource("a")] });
    expect(await readFile(`${file}.backup`, "utf8")).toBe(old); // the first write has nothing to back up
    s = await overwrite(store, { ...s, resources: [resource("b")] });
    const kept = `${file}.deleted-${OTHER.lineage}-7.backup`;
    expect(await readFile(kept, "utf8")).toBe(old);
    expect(await mode(kept)).toBe(0o600);
    expect((JSON.parse(await readFile(`${file}.backup`, "utf8")) as State).lineage).toBe(s.lineage);
    // Later writes replace the backup of their own lineage as always, and keep the moved one.
    await overwrite(store, { ...s, resources: [resource("c")] });
    expect(readdirSync(dir).sort()).toEqual(["s.json", "s.json.backup", `s.json.deleted-${OTHER.lineage}-7.backup`]);
    expect(await readFile(kept, "utf8")).toBe(old);
  });

  it(
    "also when it cannot be read as a state (kept as " + "deleted-unknown-unknown), never over a file already there",
    async () => {
      const file = join(dir, "s.json");
      await writeFile(`${file}.backup`, "not json");
      await writeFile(`${file}.deleted-unknown-unknown.backup`, "taken");
      const store = localStateStore(file);
      const s = await overwrite(store, newState("s"));
      await overwrite(store, s);
      expect(await readFile(`${file}.deleted-unknown-unknown-2.backup`, "utf8")).toBe("not json");
      expect(await readFile(`${file}.deleted-unknown-unknown.backup`, "utf8")).toBe("taken");
    },
  );

  it("of the same lineage is the previous version, replaced at every write with nothing kept aside", async () => {
    const file = join(dir, "s.json");
    const store = localStateStore(file);
    let s = await overwrite(store, newState("s"));
    for (const r of ["a", "b", "c"]) s = await overwrite(store, { ...s, resources: [resource(r)] });
    expect(readdirSync(dir).sort()).toEqual(["s.json", "s.json.backup"]);
    expect((JSON.parse(await readFile(`${file}.backup`, "utf8")) as State).resources.map((r) => r.address)).toEqual([
      "b",
    ]);
  });

  it("is not lost when workspace delete keeps the workspace's state as its .backup", async () => {
    const open = (workspace?: string) =>
      openStateStore({ stackFile: join(dir, "stack.yaml"), stackName: "s", ...(workspace ? { workspace } : {}) });
    await open().workspaces.create("w");
    const file = join(dir, "state", "s.w.json");
    const old = serializeState(OTHER);
    await open("w").store.write(newState("s"), undefined); // one write: the other lineage's backup is still there
    await writeFile(`${file}.backup`, old);
    await open().workspaces.drop("w");
    expect(existsSync(file)).toBe(false);
    expect(await readFile(`${file}.deleted-${OTHER.lineage}-7.backup`, "utf8")).toBe(old);
    expect((JSON.parse(await readFile(`${file}.backup`, "utf8")) as State).serial).toBe(1);
  });
});
