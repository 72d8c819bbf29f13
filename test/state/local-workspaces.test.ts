// The local backend's workspaces: state/{stack}.json for default, state/{stack}.{workspace}.json
// otherwise, the list in state/{stack}.workspaces, and which one `select` chose.
import { existsSync, readdirSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStateStore } from "../../src/state/factory.js";
import { newState } from "../../src/state/index.js";
import { chosenWorkspace, selectWorkspace } from "../../src/state/workspace.js";
import { tempDir } from "./helpers.js";
import { workspaceConformance } from "./workspace-conformance.js";

workspaceConformance("local file", async (stack) => {
  const { dir, cleanup } = await tempDir();
  return {
    open: (workspace) =>
      openStateStore({ stackFile: join(dir, "stack.yaml"), stackName: stack, ...(workspace ? { workspace } : {}) }),
    cleanup,
  };
});

describe("local workspaces on disk", () => {
  it("names the files state/{stack}.json and state/{stack}.{workspace}.json", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const open = (workspace?: string) =>
        openStateStore({ stackFile: join(dir, "stack.yaml"), stackName: "app", ...(workspace ? { workspace } : {}) });
      await open().workspaces.create("dev");
      await open("dev").store.write(newState("app"), undefined);
      await open().store.write(newState("app"), undefined);
      expect(existsSync(join(dir, "state", "app.dev.json"))).toBe(true);
      expect(existsSync(join(dir, "state", "app.json"))).toBe(true);
    } finally {
      await cleanup();
    }
  });

  it(
    "new of a deleted workspace's name moves its .backup aside, never " +
      "over another file, under a file-name-safe name",
    async () => {
      const { dir, cleanup } = await tempDir();
      try {
        const { workspaces } = openStateStore({ stackFile: join(dir, "stack.yaml"), stackName: "app" });
        const file = join(dir, "state", "app.dev.json");
        await mkdir(join(dir, "state"), { recursive: true });
        const hostile = JSON.stringify({ lineage: "../../escape", serial: 3 });
        await writeFile(`${file}.backup`, hostile);
        await writeFile(`${file}.deleted-unknown-3.backup`, "taken");
        const note = await workspaces.create("dev");
        expect(note).toContain(`${file}.deleted-unknown-3-2.backup`);
        expect(await readFile(`${file}.deleted-unknown-3-2.backup`, "utf8")).toBe(hostile);
        expect(await readFile(`${file}.deleted-unknown-3.backup`, "utf8")).toBe("taken");
        expect(existsSync(`${file}.backup`)).toBe(false);
        expect(readdirSync(join(dir, "state")).filter((f) => f.includes("escape"))).toEqual([]);
      } finally {
        await cleanup();
      }
    },
  );

  it(
    "--workspace wins over CONVERGE_WORKSPACE, which wins over " + "the selection; an invalid name is refused",
    async () => {
      const { dir, cleanup } = await tempDir();
      try {
        const stateDir = join(dir, "state");
        expect(chosenWorkspace(undefined, stateDir, "app", {})).toBe("default");
        await selectWorkspace(stateDir, "app", "dev");
        expect(chosenWorkspace(undefined, stateDir, "app", {})).toBe("dev");
        expect(chosenWorkspace(undefined, stateDir, "other", {})).toBe("default");
        expect(chosenWorkspace(undefined, stateDir, "app", { CONVERGE_WORKSPACE: "ci" })).toBe("ci");
        expect(chosenWorkspace("flag", stateDir, "app", { CONVERGE_WORKSPACE: "ci" })).toBe("flag");
        expect(() => chosenWorkspace("../x", stateDir, "app", {})).toThrow(/not a valid workspace name/);
      } finally {
        await cleanup();
      }
    },
  );
});
