// Issue 12 (files): the state store never blocks on, reads from, replaces or chmods a FIFO, a
// device or a directory that sits where its state file, backup or lock file goes; a symlinked
// state file is updated where it points; the directories it creates are 0700 whatever the umask.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localStateStore, newState, parseState, type LocalStateStore } from "../../src/state/index.js";
import { mode, overwrite, resource, tempDir, userError } from "./helpers.js";

/** Fails (instead of hanging the test) when `p` has not settled within `ms`. */
function within<T>(p: Promise<T>, ms = 3_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`still blocked after ${ms} ms`)), ms)),
  );
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Opens and closes a FIFO for writing, so that a reader blocked on it (old code) gets EOF. */
function unblock(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader: nothing is blocked on it
  }
}

const mkfifo = (path: string) => execFileSync("mkfifo", [path]);

describe("state files that are not regular files", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  const fifos: string[] = [];
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    mkdirSync(join(dir, "state"));
    file = join(dir, "state", "dev.json");
  });
  afterEach(async () => {
    for (const f of fifos.splice(0)) unblock(f);
    await cleanup();
  });

  /** Puts a FIFO, a directory or a symlink to a device at `path`. */
  function plant(kind: "fifo" | "dir" | "/dev/null" | "/dev/zero", path: string): string {
    if (kind === "fifo") {
      mkfifo(path);
      fifos.push(path);
    } else if (kind === "dir") mkdirSync(path);
    else symlinkSync(kind, path);
    return path;
  }

  const KIND = {
    fifo: "is a FIFO (named pipe)",
    dir: "is a directory",
    "/dev/null": "links to /dev/null, which is a character device",
    "/dev/zero": "links to /dev/zero, which is a character device",
  } as const;
  const kinds = ["fifo", "dir", "/dev/null", "/dev/zero"] as const;

  for (const kind of kinds) {
    it(`a state file that ${KIND[kind]} is refused by read, write and lock, and left as it is`, async () => {
      plant(kind, file);
      const store = localStateStore(file);
      for (const op of [() => store.read(), () => overwrite(store, newState("dev")), () => store.lock("apply")]) {
        const err = await within(userError(op));
        expect(err.diagnostics[0]!.summary).toBe(`state file ${file} ${KIND[kind]}, not a regular file`);
        expect(err.diagnostics[0]!.file).toBe(file);
        expect(err.diagnostics[0]!.detail).toMatch(/regular file/);
      }
      if (kind === "fifo") expect(lstatSync(file).isFIFO()).toBe(true);
      if (kind === "dir") expect(lstatSync(file).isDirectory()).toBe(true);
      if (kind.startsWith("/dev/")) expect(readlinkSync(file)).toBe(kind);
      expect(readdirSync(join(dir, "state"))).toEqual(["dev.json"]); // no lock, temp file or backup left
    });

    it(`a lock file that ${KIND[kind]} is refused (never waited on, read or removed)`, async () => {
      plant(kind, `${file}.lock`);
      const store = localStateStore(file);
      const err = await within(userError(() => store.lock("apply")));
      expect(err.diagnostics[0]!.summary).toBe(`lock file ${file}.lock ${KIND[kind]}, not a regular file`);
      expect(err.diagnostics[0]!.detail).toContain(`remove ${file}.lock`);
      const err2 = await within(userError(() => store.forceUnlock("5b0c1f7e-0000-4000-8000-000000000001")));
      expect(err2.diagnostics[0]!.summary).toBe(err.diagnostics[0]!.summary);
      expect(existsSync(`${file}.lock`) || lstatSync(`${file}.lock`).isSymbolicLink()).toBe(true);
    });

    it(`a .backup that ${KIND[kind]} is refused before anything is written`, async () => {
      const store = localStateStore(file);
      const v1 = await overwrite(store, newState("dev"));
      const before = readFileSync(file, "utf8");
      plant(kind, `${file}.backup`);
      for (const op of [() => overwrite(store, { ...v1, resources: [resource("a")] }), () => store.lock("apply")]) {
        const err = await within(userError(op));
        expect(err.diagnostics[0]!.summary).toBe(`state backup ${file}.backup ${KIND[kind]}, not a regular file`);
      }
      expect(readFileSync(file, "utf8")).toBe(before);
      if (kind === "fifo") expect(lstatSync(`${file}.backup`).isFIFO()).toBe(true);
      if (kind.startsWith("/dev/")) expect(readlinkSync(`${file}.backup`)).toBe(kind);
      expect(readdirSync(join(dir, "state")).sort()).toEqual(["dev.json", "dev.json.backup"]);
    });
  }

  it("a lock file that is a dangling symlink is refused instead of looping for ever", async () => {
    symlinkSync(join(dir, "nowhere", "dev.json.lock"), `${file}.lock`);
    const err = await within(userError(() => localStateStore(file).lock("apply")));
    expect(err.diagnostics[0]!.summary).toBe(
      `lock file ${file}.lock links to ${join(dir, "nowhere", "dev.json.lock")}, which does not exist`,
    );
  });
});

describe("a symlinked state file", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let link: string;
  let target: string;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    mkdirSync(join(dir, "state"));
    mkdirSync(join(dir, "shared"));
    link = join(dir, "state", "dev.json");
    target = join(dir, "shared", "dev.json");
  });
  afterEach(() => cleanup());

  async function twoWrites(store: LocalStateStore) {
    const v1 = await overwrite(store, newState("dev"));
    const v2 = await overwrite(store, { ...v1, resources: [resource("a")] });
    return { v1, v2 };
  }

  it("is updated where it points: the link stays a link, backup and lock sit beside the target", async () => {
    symlinkSync("../shared/dev.json", link);
    // A dangling link: the first write creates the target.
    const store = localStateStore(link);
    const { v1, v2 } = await twoWrites(store);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("../shared/dev.json");
    expect(parseState(readFileSync(target, "utf8"), target)).toEqual(v2);
    expect(parseState(readFileSync(`${target}.backup`, "utf8"), target)).toEqual(v1);
    expect(await mode(target)).toBe(0o600);
    expect(await store.read()).toEqual(v2);
    expect(readdirSync(join(dir, "state"))).toEqual(["dev.json"]);
    const lock = await store.lock("apply");
    expect(readdirSync(join(dir, "shared")).sort()).toEqual(["dev.json", "dev.json.backup", "dev.json.lock"]);
    expect(JSON.parse(readFileSync(`${target}.lock`, "utf8"))).toMatchObject({ id: lock.info.id, path: link });
    // The same state through its real path is locked too: one lock per file, however it is named.
    const err = await userError(() => localStateStore(target).lock("apply"));
    expect(err.diagnostics[0]!.summary).toContain(`lock ID ${lock.info.id}`);
    await lock.release();
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it("follows a chain of links to an existing state", async () => {
    await overwrite(localStateStore(target), newState("dev"));
    symlinkSync(target, join(dir, "state", "middle.json"));
    symlinkSync("middle.json", link);
    const store = localStateStore(link);
    const written = await overwrite(store, { ...(await store.read())!, resources: [resource("b")] });
    expect(written.serial).toBe(2);
    expect(readlinkSync(link)).toBe("middle.json");
    expect(lstatSync(join(dir, "state", "middle.json")).isSymbolicLink()).toBe(true);
    expect(parseState(readFileSync(target, "utf8"), target)).toEqual(written);
    expect(existsSync(`${target}.backup`)).toBe(true);
  });

  it("a loop of links is a clear error", async () => {
    symlinkSync("b.json", link);
    symlinkSync("dev.json", join(dir, "state", "b.json"));
    const err = await userError(() => overwrite(localStateStore(link), newState("dev")));
    expect(err.diagnostics[0]!.summary).toContain(`state file ${link}`);
    expect(err.diagnostics[0]!.summary).toMatch(/symbolic links/);
  });
});

describe("directories the store creates", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  for (const umask of [0, 0o077, 0o022]) {
    it(
      `are 0700 with umask ${umask.toString(8).padStart(3, "0")} (write and ` +
        `lock), and an existing directory keeps its mode`,
      async () => {
        const old = process.umask(umask);
        try {
          await overwrite(localStateStore(join(dir, "a", "b", "dev.json")), newState("dev"));
          expect(statSync(join(dir, "a")).mode & 0o777).toBe(0o700);
          expect(statSync(join(dir, "a", "b")).mode & 0o777).toBe(0o700);
          const lock = await localStateStore(join(dir, "c", "dev.json")).lock("apply");
          expect(statSync(join(dir, "c")).mode & 0o777).toBe(0o700);
          expect(await mode(join(dir, "c", "dev.json.lock"))).toBe(0o600);
          await lock.release();
          mkdirSync(join(dir, "mine"), { mode: 0o755 });
          execFileSync("chmod", ["755", join(dir, "mine")]);
          await overwrite(localStateStore(join(dir, "mine", "dev.json")), newState("dev"));
          expect(statSync(join(dir, "mine")).mode & 0o777).toBe(0o755);
        } finally {
          process.umask(old);
        }
      },
    );
  }
});
