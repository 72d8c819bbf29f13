// Issue 37, item 3: files nested far deeper than anything converge writes, through the real CLI.
// A stack 3,000 levels deep (compact sequences, block maps, flow collections, a mix, aliases, a
// .json stack) and a saved plan or a state 100,000 levels deep (`show PLAN`, `apply PLAN`,
// `show --state`, `plan --state`, `state show|list --state`, `state push`) each end in one
// positioned "nested more than N levels deep" error, exit 1: no internal error, no request to the
// cloud, no state written.
import { existsSync } from "node:fs";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { MAX_DATA_DEPTH, MAX_STACK_DEPTH } from "../../src/diagnostics/nesting.js";
import {
  expectExit,
  resetStats,
  runCli,
  stackTraceLines,
  stats,
  totalRequests,
  useEmulatorWorkspace,
  type CliResult,
} from "./helpers.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
};

const MARK = "deep-marker";
const STACK =
  stackHead("deep") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  `outputs:\n  who: ${MARK}\n`;

const ws = useEmulatorWorkspace(SEED, "converge-deep-files-");
const at = (name: string) => join(ws.dir, name);
const statePath = () => at("state/deep.json");

/** The CLI in the workspace, against the emulator, with the workspace's stack and state. */
const cli = (...args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu, timeoutMs: 60_000 });

/** The refusal: exit 1, the depth error at `file:line:column`, no trace, no internal error. */
function expectTooDeep(r: CliResult, where: string, levels: number): void {
  expect(r.stderr).not.toMatch(/internal error|Maximum call stack/);
  expect(stackTraceLines(r.stderr)).toEqual([]);
  expect(r.stderr).toContain(`${where}: Error: `);
  expect(r.stderr).toContain(`nested more than ${levels} levels deep`);
  expectExit(r, 1);
}

/** Line and column (from 1) of `offset` in `text`. */
function place(text: string, offset: number): string {
  const lines = text.slice(0, offset).split("\n");
  return `${lines.length}:${lines[lines.length - 1]!.length + 1}`;
}

/** `text` with the JSON string "deep-marker" replaced by 100,000 `open`s, `inner` and as many
 *  `close`s; and where its first bracket past MAX_DATA_DEPTH is, as "line:column". */
function deepen(text: string, open: string, inner: string, close: string): { text: string; where: string } {
  const start = text.indexOf(`"${MARK}"`);
  if (start < 0) throw new Error(`no "${MARK}" in the file`);
  const before = text.slice(0, start);
  const envelope = (before.match(/[[{]/g) ?? []).length - (before.match(/[\]}]/g) ?? []).length;
  const n = 100_000;
  const out = before + open.repeat(n) + inner + close.repeat(n) + text.slice(start + MARK.length + 2);
  return { text: out, where: place(out, start + (MAX_DATA_DEPTH - envelope) * open.length) };
}

const LISTS = ["[", "0", "]"] as const;
const MAPS = ['{"a":', "1", "}"] as const;

beforeAll(async () => {
  await writeFile(at("stack.yaml"), STACK);
  expectExit(await cli("apply", "--auto-approve", "--state", statePath()), 0);
  expect(await readFile(statePath(), "utf8")).toContain(MARK);
  expectExit(await cli("plan", "--out", at("plan.json"), "--state", statePath()), 0);
  expect(await readFile(at("plan.json"), "utf8")).toContain(MARK);
}, 120_000);

/** Runs `args` and checks it refused `where` without a request or a change to the state. */
async function refused(args: string[], where: string, levels = MAX_DATA_DEPTH): Promise<void> {
  const before = await readFile(statePath());
  await resetStats(ws.emu);
  expectTooDeep(await cli(...args), where, levels);
  expect(totalRequests(await stats(ws.emu))).toBe(0);
  expect((await readFile(statePath())).equals(before)).toBe(true);
}

describe("a saved plan 100,000 levels deep", () => {
  for (const [shape, parts] of [
    ["lists in an output", LISTS],
    ["maps in an output", MAPS],
  ] as const) {
    it(`${shape}: show PLAN and apply PLAN refuse it at its line and column`, async () => {
      // Diagnostics name files relative to the working directory: the CLI is given relative names.
      const file = `plan-${parts[0] === "[" ? "lists" : "maps"}.json`;
      const deep = deepen(await readFile(at("plan.json"), "utf8"), parts[0], parts[1], parts[2]);
      await writeFile(at(file), deep.text);
      await refused(["show", file], `${file}:${deep.where}`);
      await refused(["apply", file, "--state", statePath()], `${file}:${deep.where}`);
    }, 120_000);
  }

  it("a value in a resource change (a member) nested that deep is refused the same way", async () => {
    const text = (await readFile(at("plan.json"), "utf8")).replace('"user:alice@example.com"', `"${MARK}"`);
    const deep = deepen(text, ...MAPS);
    const file = "plan-change.json";
    await writeFile(at(file), deep.text);
    await refused(["show", file], `${file}:${deep.where}`);
  }, 120_000);
});

describe("a state 100,000 levels deep", () => {
  let file: string;
  let where: string;
  beforeAll(async () => {
    const deep = deepen(await readFile(statePath(), "utf8"), ...LISTS);
    file = "deep-state.json";
    where = deep.where;
    await writeFile(at(file), deep.text);
  });

  it("show --state FILE", async () => refused(["show", "--state", file], `${file}:${where}`), 60_000);
  it("plan --state FILE", async () => refused(["plan", "--state", file], `${file}:${where}`), 60_000);
  it("state list --state FILE", async () => refused(["state", "list", "--state", file], `${file}:${where}`), 60_000);
  it(
    "state show ADDRESS --state FILE",
    async () => refused(["state", "show", "viewers", "--state", file], `${file}:${where}`),
    60_000,
  );
  it(
    "state push FILE (the stored state untouched)",
    async () => refused(["state", "push", file, "--state", statePath()], `${file}:${where}`),
    60_000,
  );

  it("the stored state itself that deep: apply and state rm refuse it, and leave it as it is", async () => {
    const stored = "state/stored-deep.json";
    await copyFile(at(file), at(stored));
    const before = await readFile(at(stored));
    await resetStats(ws.emu);
    expectTooDeep(await cli("apply", "--auto-approve", "--state", stored), `${stored}:${where}`, MAX_DATA_DEPTH);
    expectTooDeep(await cli("state", "rm", "viewers", "--state", stored), `${stored}:${where}`, MAX_DATA_DEPTH);
    expect(totalRequests(await stats(ws.emu))).toBe(0);
    expect((await readFile(at(stored))).equals(before)).toBe(true);
  }, 120_000);
});

/** A stack whose variable `v` holds `value` (written from column 5 of line 7). */
const stackWith = (value: string) =>
  `name: deep\nprovider:\n  project: my-project\n  location: us-central1\nvariables:\n  v:\n    ${value}\n`;

const N = 3000;
/** The first `n` levels of lists, each with an anchor: "&a0 [&a1 [". */
const anchored = (n: number) => Array.from({ length: n }, (_, i) => `&a${i} [`).join("");
const JSON_HEAD = `{"name": "deep", "provider": {"project": "my-project"}, "variables": {"v": `;
const yamlCases: { what: string; file: string; text: string; where: string }[] = [
  // The root map is level 1, variables' map 2, the value's first list 3 (at column 5): the first
  // list too deep is the (MAX_STACK_DEPTH - 2)th of the value.
  {
    what: "compact sequences (- - - x)",
    file: "compact.yaml",
    text: stackWith(`${"- ".repeat(N)}x`),
    where: `7:${5 + 2 * (MAX_STACK_DEPTH - 2)}`,
  },
  {
    what: "block maps (a:\\n a:\\n …)",
    file: "blocks.yaml",
    text: "variables:\n" + Array.from({ length: N }, (_, i) => `${" ".repeat(i + 1)}a:`).join("\n") + "\n",
    // variables is level 1, each a: one more: the 64th a: holds the 65th map, on the next line.
    where: `${MAX_STACK_DEPTH + 1}:${MAX_STACK_DEPTH + 1}`,
  },
  {
    what: "flow lists",
    file: "flow.yaml",
    text: stackWith(`${"[".repeat(N)}${"]".repeat(N)}`),
    where: `7:${5 + MAX_STACK_DEPTH - 2}`,
  },
  {
    what: "flow maps",
    file: "flow-maps.yaml",
    text: stackWith(`${"{a: ".repeat(N)}1${"}".repeat(N)}`),
    where: `7:${5 + 4 * (MAX_STACK_DEPTH - 2)}`,
  },
  {
    what: "block maps and sequences mixed",
    file: "mixed.yaml",
    text:
      "variables:\n" +
      Array.from({ length: N }, (_, i) => `${" ".repeat(i + 1)}${i % 2 ? "a:" : "-"}`).join("\n") +
      "\n",
    where: `${MAX_STACK_DEPTH + 1}:${MAX_STACK_DEPTH + 1}`,
  },
  {
    what: "flow lists with an anchor at each level, and an alias",
    file: "anchors.yaml",
    text: stackWith(`${anchored(N)}x${"]".repeat(N)}`) + "  w: *a0\n",
    // (at the list's bracket, after its anchor)
    where: `7:${5 + anchored(MAX_STACK_DEPTH - 2).length + `&a${MAX_STACK_DEPTH - 2} `.length}`,
  },
  {
    what: "a .json stack",
    file: "stack.json",
    text: `${JSON_HEAD}${"[".repeat(N)}${"]".repeat(N)}}}\n`,
    where: `1:${JSON_HEAD.length + MAX_STACK_DEPTH - 1}`,
  },
];

describe("a stack 3,000 levels deep", () => {
  for (const c of yamlCases) {
    it(`${c.what}: validate and plan refuse it at its position`, async () => {
      const file = at(c.file);
      await writeFile(file, c.text);
      for (const cmd of [["validate"], ["plan", "--state", statePath()]])
        await refused([...cmd, "-f", c.file], `${c.file}:${c.where}`, MAX_STACK_DEPTH);
    }, 120_000);
  }
});

describe("a seed file 3,000 levels deep", () => {
  it("plan with the embedded emulator refuses it at its position, with the same wording", async () => {
    const provider = "provider:\n  project: my-project\n  endpoint: embedded\n  seed: seed.yaml\n";
    const stack = `name: seeded\n${provider}`;
    await writeFile(at("seeded.yaml"), stack);
    // The root map is level 1, projects' map 2, my-project's 3, labels' 4: x's lists from level 5.
    await writeFile(
      at("seed.yaml"),
      `projects:\n  my-project:\n    labels:\n      x: ${"[".repeat(N)}${"]".repeat(N)}\n`,
    );
    const r = await runCli(["plan", "-f", "seeded.yaml", "--state", "state/seeded.json"], {
      cwd: ws.dir,
      timeoutMs: 60_000,
    });
    expectTooDeep(r, `seed.yaml:4:${"      x: ".length + 1 + MAX_STACK_DEPTH - 4}`, MAX_STACK_DEPTH);
  }, 60_000);
});

describe("a program stack whose values nest deeper than a YAML stack's may", () => {
  // A state written from it would be refused by every later command (more than MAX_DATA_DEPTH),
  // so the program's document is held to a stack's limit, like a YAML stack's.
  // The document's root map is level 1, outputs' map 2: an output's lists start at level 3.
  for (const lists of [MAX_STACK_DEPTH - 1, 300]) {
    it(`an output ${lists} lists deep: apply refuses it at the export, and writes no state`, async () => {
      const file = `deep-${lists}.mjs`;
      const program =
        "export default (stack) => {\n" +
        '  stack.name = "prog";\n' +
        '  stack.provider = { project: "my-project", endpoint: "embedded" };\n' +
        '  let v = "x";\n' +
        `  for (let i = 0; i < ${lists}; i++) v = [v];\n` +
        '  stack.export("deep", v);\n' +
        "};\n";
      await writeFile(at(file), program);
      const state = `state/prog-${lists}.json`;
      const r = await runCli(["apply", "--auto-approve", "-f", file, "--state", state], {
        cwd: ws.dir,
        timeoutMs: 60_000,
      });
      // At the call that exported it (its opening parenthesis, where the SDK records a call).
      expectTooDeep(r, `${file}:6:${"  stack.export(".length}`, MAX_STACK_DEPTH);
      expect(existsSync(at(state))).toBe(false);
    }, 60_000);
  }
});

describe("a YAML stack whose ${…} references build a value deeper than a stack may hold", () => {
  it("six variables, each 55 lists around the last: plan and apply refuse where it passes the limit", async () => {
    let text = "name: chain\nprovider:\n  project: my-project\n  endpoint: embedded\nvariables:\n  v0: x\n";
    for (let k = 1; k <= 6; k++) text += `  v${k}: ${"[".repeat(55)}"\${v${k - 1}}"${"]".repeat(55)}\n`;
    text += "outputs:\n  deep: ${v6}\n";
    await writeFile(at("chain.yaml"), text);
    for (const args of [["plan"], ["apply", "--auto-approve"]]) {
      const r = await runCli([...args, "-f", "chain.yaml", "--state", "state/chain.json"], {
        cwd: ws.dir,
        timeoutMs: 60_000,
      });
      // v2 (line 8) is the first too deep: 2 levels (root, variables) + 55 lists + v1's 55.
      expectTooDeep(r, `chain.yaml:8:${"  v2: ".length + 55 + 2}`, MAX_STACK_DEPTH);
      expect(r.stderr).toContain('"${v1}"');
      expect(existsSync(at("state/chain.json"))).toBe(false);
    }
  }, 60_000);
});
