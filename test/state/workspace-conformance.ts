// What every backend's workspaces do (issue 17), through the factory that commands use: default
// always exists, `new` makes an empty one, each workspace has its own state and lock, a missing
// one is refused naming `workspace new`, and dropping one removes its state.
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { type OpenedState } from "../../src/state/factory.js";
import { newState, type State, versionOf } from "../../src/state/index.js";

export interface WorkspaceFixture {
  /** The stack's state in `workspace` (default: the selected one), as a command opens it. */
  open: (workspace?: string) => OpenedState;
  cleanup: () => Promise<void>;
}

const withResource = (s: State, address: string): State => ({
  ...s,
  resources: [...s.resources, { address, type: "t", id: address, inputs: {}, outputs: {}, dependencies: [] }],
});

async function refusal(p: Promise<unknown>): Promise<UserError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(UserError);
  return e as UserError;
}

export function workspaceConformance(backend: string, fixture: (stack: string) => Promise<WorkspaceFixture>): void {
  const use = async (fn: (f: WorkspaceFixture) => Promise<void>) => {
    const f = await fixture("wsconf");
    try {
      await fn(f);
    } finally {
      await f.cleanup();
    }
  };

  describe(`workspaces: ${backend}`, () => {
    it("default always exists; new makes an empty workspace; a second new of it is refused", () =>
      use(async ({ open }) => {
        const { workspaces } = open();
        expect(await workspaces.list()).toEqual(["default"]);
        await workspaces.create("dev");
        await workspaces.create("a-team");
        expect(await workspaces.list()).toEqual(["default", "a-team", "dev"]);
        expect(await open("dev").store.read()).toBeUndefined();
        await refusal(workspaces.create("dev"));
        await refusal(workspaces.create("default"));
      }));

    it("a missing workspace is refused before anything is read or written, naming workspace new", () =>
      use(async ({ open }) => {
        const e = await refusal(open("nope").store.read());
        expect(e.diagnostics[0]!.code).toBe("state/no-workspace");
        expect(e.diagnostics[0]!.detail).toContain("converge workspace new nope");
        await refusal(open("nope").store.write(newState("wsconf"), undefined));
        await refusal(open("nope").store.lock("apply"));
      }));

    it("each workspace has its own state and its own lock", () =>
      use(async ({ open }) => {
        await open().workspaces.create("dev");
        const d = await open("default").store.write(withResource(newState("wsconf"), "prod-only"), undefined);
        const v = await open("dev").store.write(withResource(newState("wsconf"), "dev-only"), undefined);
        expect((await open("default").store.read())!.resources.map((r) => r.address)).toEqual(["prod-only"]);
        expect((await open("dev").store.read())!.resources.map((r) => r.address)).toEqual(["dev-only"]);
        expect(d.lineage).not.toBe(v.lineage);
        const lock = await open("default").store.lock("apply");
        const other = await open("dev").store.lock("apply");
        await refusal(open("default").store.lock("apply"));
        await other.release();
        await lock.release();
        await open("dev").store.write(withResource(v, "more"), versionOf(v));
      }));

    it("drop removes the workspace and its state; dropping default only empties it", () =>
      use(async ({ open }) => {
        const { workspaces } = open();
        await workspaces.create("gone");
        await open("gone").store.write(withResource(newState("wsconf"), "x"), undefined);
        await workspaces.drop("gone");
        expect(await workspaces.list()).toEqual(["default"]);
        await refusal(open("gone").store.read());
        await workspaces.create("gone");
        expect(await open("gone").store.read()).toBeUndefined();
        await open("default").store.write(newState("wsconf"), undefined);
        await workspaces.drop("default");
        expect(await open("default").store.read()).toBeUndefined();
        expect(await workspaces.list()).toEqual(["default", "gone"]);
      }));
  });
}
