import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { localStateStore, newState, parseState, serializeState, type State } from "../../src/state/index.js";
import { deadPid, mode, overwrite, resource, tempDir, userError } from "./helpers.js";

describe("local state store", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = join(dir, "state", "dev.json");
  });
  afterEach(() => cleanup());

  it("read is undefined before the first write", async () => {
    expect(await localStateStore(file).read()).toBeUndefined();
  });

  it("round-trips: write creates the directory, read returns what write returned", async () => {
    const store = localStateStore(file);
    expect(store.path).toBe(file);
    const s: State = {
      ...newState("dev"),
      resources: [resource("a", { inputs: { role: "roles/viewer" }, protect: true })],
      outputs: { x: 1 },
    };
    const written = await overwrite(store, s);
    expect(written).toEqual({ ...s, serial: 1 });
    expect(await store.read()).toEqual(written);
    expect(readFileSync(file, "utf8")).toBe(serializeState(written));
    expect(s.serial).toBe(0); // the argument is not modified
  });

  it("bumps the serial on every write, from the serial on disk", async () => {
    const store = localStateStore(file);
    const s = newState("dev");
    expect((await overwrite(store, s)).serial).toBe(1);
    expect((await overwrite(store, s)).serial).toBe(2); // a stale serial in `next` does not go backwards
    const third = await overwrite(store, { ...s, serial: 2 });
    expect(third.serial).toBe(3);
    expect((await store.read())!.serial).toBe(3);
    // without a file, the serial of `next` counts
    const other = localStateStore(join(dir, "other.json"));
    expect((await overwrite(other, { ...newState("other"), serial: 41 })).serial).toBe(42);
  });

  it("keeps the lineage and refuses a state of another lineage", async () => {
    const store = localStateStore(file);
    const first = await overwrite(store, newState("dev"));
    const second = await overwrite(store, { ...first, resources: [resource("a")] });
    expect(second.lineage).toBe(first.lineage);
    const before = readFileSync(file, "utf8");
    const err = await userError(() => overwrite(store, newState("prod")));
    expect(err.diagnostics[0]!.summary).toContain(first.lineage);
    expect(err.diagnostics[0]!.summary).toContain("another state");
    expect(err.diagnostics[0]!.file).toBe(file);
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("a store opened for a stack refuses to read or replace another stack's state, naming both stacks", async () => {
    const prod = await overwrite(localStateStore(file), newState("prod"));
    const before = readFileSync(file, "utf8");
    const store = localStateStore(file, { stack: "dev" });
    for (const op of [
      () => store.read(),
      () => overwrite(store, newState("dev")),
      () => overwrite(store, { ...prod, stack: "dev" }),
    ]) {
      const err = await userError(op);
      expect(err.diagnostics[0]!.summary).toBe(`state file ${file} belongs to stack "prod", not to stack "dev"`);
      expect(err.diagnostics[0]!.file).toBe(file);
    }
    expect(readFileSync(file, "utf8")).toBe(before);
    // Its own stack's state reads as usual.
    expect(await localStateStore(file, { stack: "prod" }).read()).toEqual(prod);
  });

  it("a store opened for a stack refuses (as a bug) to write a state that names another stack", async () => {
    const store = localStateStore(file, { stack: "dev" });
    await expect(overwrite(store, newState("prod"))).rejects.toThrow(/stack "prod".*stack "dev"/);
    expect(existsSync(file)).toBe(false);
  });

  it("refuses to count past the largest safe serial", async () => {
    const store = localStateStore(file);
    const first = await overwrite(store, newState("dev"));
    const text = readFileSync(file, "utf8").replace('"serial": 1', `"serial": ${Number.MAX_SAFE_INTEGER}`);
    writeFileSync(file, text);
    const err = await userError(() => overwrite(store, first));
    expect(err.diagnostics[0]!.summary).toContain("serial");
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("keeps the previous version in .backup", async () => {
    const store = localStateStore(file);
    const v1 = await overwrite(store, newState("dev"));
    expect(existsSync(`${file}.backup`)).toBe(false);
    const v2 = await overwrite(store, { ...v1, resources: [resource("a")] });
    expect(parseState(readFileSync(`${file}.backup`, "utf8"), `${file}.backup`)).toEqual(v1);
    const v3 = await overwrite(store, { ...v2, resources: [] });
    expect(parseState(readFileSync(`${file}.backup`, "utf8"), `${file}.backup`)).toEqual(v2);
    expect(await store.read()).toEqual(v3);
    // nothing else is left in the directory
    expect(readdirSync(join(dir, "state")).sort()).toEqual(["dev.json", "dev.json.backup"]);
  });

  for (const umask of [0, 0o277, 0o022]) {
    it(`state and backup are mode 0600 with umask ${umask.toString(8).padStart(3, "0")}`, async () => {
      await mkdir(join(dir, "state"));
      const old = process.umask(umask);
      try {
        const store = localStateStore(file);
        const v1 = await overwrite(store, newState("dev"));
        expect(await mode(file)).toBe(0o600);
        await overwrite(store, v1);
        expect(await mode(file)).toBe(0o600);
        expect(await mode(`${file}.backup`)).toBe(0o600);
      } finally {
        process.umask(old);
      }
    });
  }

  it("tightens a state file created by hand with mode 0644 (and its backup) to 0600", async () => {
    await mkdir(join(dir, "state"));
    const s = { ...newState("dev"), serial: 7 };
    writeFileSync(file, JSON.stringify(s));
    chmodSync(file, 0o644);
    const written = await overwrite(localStateStore(file), s);
    expect(written.serial).toBe(8);
    expect(await mode(file)).toBe(0o600);
    expect(await mode(`${file}.backup`)).toBe(0o600);
    expect(JSON.parse(readFileSync(`${file}.backup`, "utf8"))).toEqual(s);
  });

  it("read of invalid JSON is a UserError naming the file and the backup", async () => {
    const store = localStateStore(file);
    const v1 = await overwrite(store, newState("dev"));
    await overwrite(store, v1);
    await writeFile(file, '{"version": 1,');
    const err = await userError(() => store.read());
    expect(err.diagnostics[0]!.summary).toContain(file);
    expect(err.diagnostics[0]!.summary).toContain("not valid JSON");
    expect(err.diagnostics[0]!.detail).toContain(`${file}.backup`);
  });

  it("read of a schema-invalid state is a UserError naming the file and the problem", async () => {
    await mkdir(join(dir, "state"));
    await writeFile(
      file,
      JSON.stringify({ version: 1, lineage: "x", serial: 1, stack: "dev", resources: [], outputs: {}, extra: true }),
    );
    const err = await userError(() => localStateStore(file).read());
    expect(err.diagnostics[0]!.summary).toContain(file);
    expect(err.diagnostics[0]!.summary).toContain("additional properties");
  });

  it("write refuses to replace a corrupt state file", async () => {
    await mkdir(join(dir, "state"));
    await writeFile(file, "garbage");
    await expect(overwrite(localStateStore(file), newState("dev"))).rejects.toBeInstanceOf(UserError);
    expect(await readFile(file, "utf8")).toBe("garbage");
  });

  it("writing an invalid state is a bug (plain Error), and nothing is written", async () => {
    const store = localStateStore(file);
    const v1 = await overwrite(store, newState("dev"));
    const before = readFileSync(file, "utf8");
    const bad = { ...v1, resources: [{ address: "a" }] } as unknown as State;
    const err = await overwrite(store, bad).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(UserError);
    expect(String(err)).toContain("/resources/0");
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  // root ignores permissions
  it.skipIf(process.getuid?.() === 0)("a permission problem is a UserError", async () => {
    await mkdir(join(dir, "state"));
    chmodSync(join(dir, "state"), 0o500);
    try {
      const err = await userError(() => overwrite(localStateStore(file), newState("dev")));
      expect(err.diagnostics[0]!.summary).toContain("EACCES");
    } finally {
      chmodSync(join(dir, "state"), 0o700);
    }
  });

  it("removes temp files left by killed writers once they are old", async () => {
    const store = localStateStore(file);
    const v1 = await overwrite(store, newState("dev"));
    const pid = await deadPid();
    const stateDir = join(dir, "state");
    const leftovers = [`.dev.json.tmp-${pid}-0a1b2c`, `.dev.json.backup-tmp-${pid}-3d4e5f`];
    const fresh = `.dev.json.tmp-${pid}-abcdef`;
    const alive = `.dev.json.tmp-${process.pid}-abcdef`;
    for (const n of [...leftovers, fresh, alive]) await writeFile(join(stateDir, n), "partial");
    const old = new Date(Date.now() - 3_600_000);
    for (const n of [...leftovers, alive]) await utimes(join(stateDir, n), old, old);
    await overwrite(store, v1);
    expect(readdirSync(stateDir).sort()).toEqual([alive, fresh, "dev.json", "dev.json.backup"].sort());
  });

  it("removes a temp file older than 10 minutes even when its pid is alive again (pids are reused)", async () => {
    const store = localStateStore(file);
    const v1 = await overwrite(store, newState("dev"));
    const stateDir = join(dir, "state");
    // The parent process is alive and is not this one: as if a dead writer's pid had been reused.
    const reused = `.dev.json.tmp-${process.ppid}-0a1b2c`;
    const recent = `.dev.json.tmp-${process.ppid}-3d4e5f`;
    for (const n of [reused, recent]) await writeFile(join(stateDir, n), "partial");
    await utimes(join(stateDir, reused), new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    await utimes(join(stateDir, recent), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    await overwrite(store, v1);
    expect(readdirSync(stateDir).sort()).toEqual([recent, "dev.json", "dev.json.backup"].sort());
  });
});
