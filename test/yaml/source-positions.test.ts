// SourceDocument.position: where a value (or its key) is, for diagnostics. The same answers as
// yaml's own lookup (Document.getIn), and at a cost that does not grow with the size of the maps
// on the way: yaml scans a map's pairs for each key, so a position for each of N resources (an
// error per unreadable policy, a lint warning per resource) cost N²/2 pair visits: minutes at
// 100,000 resources.
import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import type * as Yaml from "yaml";
import { SimpleOutline } from "../../src/yaml/simple-outline.js";
import { SourceDocument, type DocPath } from "../../src/yaml/source.js";
import { seededRandom } from "../support/seeded-random.js";

// The same module instance as src/yaml/yaml-lib.ts (required, not imported).
const yaml = createRequire(import.meta.url)("yaml") as typeof Yaml;

/** The position as the old code found it: yaml's getIn for the node and its nearest ancestor. */
function reference(src: SourceDocument, path: DocPath, opts: { key?: boolean } = {}): { line: number; column: number } {
  const doc = src.doc;
  const at = (offset: number) => {
    const { line, col } = src.lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (opts.key && path.length > 0) {
    const parent = doc.getIn(path.slice(0, -1), true) as Yaml.Node | undefined;
    if (parent && yaml.isMap(parent)) {
      const last = path[path.length - 1];
      const pair = parent.items.find((p) => yaml.isScalar(p.key) && p.key.value === last);
      const keyNode = pair?.key as Yaml.Node | undefined;
      if (keyNode?.range) return at(keyNode.range[0]);
    }
  }
  for (let depth = path.length; depth >= 0; depth--) {
    const node = (depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true)) as Yaml.Node | undefined;
    if (node?.range) return at(node.range[0]);
  }
  return { line: 1, column: 1 };
}

/** A random document: maps (some keys repeated, some numeric), lists, scalars, nested. */
function randomYaml(rand: () => number, depth = 0, indent = ""): string {
  const keys = ["a", "b", "c", "1", "name", "members"];
  const scalar = () => (rand() < 0.5 ? `v${Math.floor(rand() * 9)}` : String(Math.floor(rand() * 9)));
  if (depth > 3 || rand() < 0.25) return ` ${scalar()}\n`;
  if (rand() < 0.3) {
    const n = 1 + Math.floor(rand() * 3);
    return (
      "\n" +
      Array.from({ length: n }, () => `${indent}- ${randomYaml(rand, depth + 1, indent + "  ").trimStart()}`).join("")
    );
  }
  const n = 1 + Math.floor(rand() * 4);
  return (
    "\n" +
    Array.from(
      { length: n },
      () => `${indent}${keys[Math.floor(rand() * keys.length)]}:${randomYaml(rand, depth + 1, indent + "  ")}`,
    ).join("")
  );
}

function randomPath(rand: () => number): DocPath {
  const segs: (string | number)[] = ["a", "b", "c", "1", "name", "members", "zz", 0, 1, 2, 5];
  return Array.from({ length: Math.floor(rand() * 5) }, () => segs[Math.floor(rand() * segs.length)]!);
}

const realGet = yaml.YAMLMap.prototype.get;
afterEach(() => {
  yaml.YAMLMap.prototype.get = realGet;
});

describe("SourceDocument.position", () => {
  it("finds what yaml's getIn finds, on 3,000 random documents and paths (repeated keys included)", () => {
    const rand = seededRandom(20261123);
    for (let i = 0; i < 3_000; i++) {
      const text = `root:${randomYaml(rand, 0, "  ")}`;
      const src = new SourceDocument("/virtual/random.yaml", text);
      for (let j = 0; j < 5; j++) {
        const path = ["root", ...randomPath(rand)];
        const key = rand() < 0.3;
        expect(src.position(path, { key }), `${JSON.stringify(path)} key=${key} in\n${text}`).toEqual(
          reference(src, path, { key }),
        );
      }
    }
  });

  it("positions of all 20,000 resources of a stack visit each map's pairs a bounded number of times", () => {
    const n = 20_000;
    const text =
      "name: big\nresources:\n" +
      Array.from({ length: n }, (_, i) => `  r${i}:\n    type: t\n    properties:\n      name: p${i}\n`).join("");
    const src = new SourceDocument("/virtual/big.yaml", text);
    let visited = 0;
    yaml.YAMLMap.prototype.get = function (this: Yaml.YAMLMap, key: unknown, keepScalar?: boolean) {
      visited += this.items.length;
      return realGet.call(this, key, keepScalar);
    } as typeof realGet;
    for (let i = 0; i < n; i++) {
      expect(src.position(["resources", `r${i}`, "properties", "name"]).line).toBe(3 + 4 * i + 3);
      expect(src.position(["resources", `r${i}`], { key: true }).line).toBe(3 + 4 * i);
    }
    // A scan of the resources map per lookup would be about n²/2 = 200,000,000 visits.
    expect(visited).toBeLessThanOrEqual(10 * n);
  });

  // A text the fast path read has its positions found in the entry they are in (parsed alone)
  // instead of in a parse of the whole text: one typo in a stack of 100,000 resources made every
  // command parse all of it (15 s). The same answers as the whole text's, for values and keys, at
  // offsets into scalars, in lists and flow collections, and for paths that go past what exists.
  it("finds in an entry what the whole text's parse finds, on 2,000 random documents of the fast subset", () => {
    const rand = seededRandom(20261124);
    let fast = 0;
    for (let i = 0; i < 2_000; i++) {
      const text = `name: s${i}\n# a comment\nresources:${fastYaml(rand, 0, "  ")}outputs:\n  o: x\n`;
      const src = new SourceDocument("/virtual/fast.yaml", text);
      const fastRead = !src.parsedWhole;
      const whole = new SourceDocument("/virtual/fast.yaml", text, { fast: false });
      for (let j = 0; j < 6; j++) {
        const path = [...(rand() < 0.9 ? ["resources"] : rand() < 0.5 ? ["outputs"] : ["name"]), ...fastPath(rand)];
        const opts = { key: rand() < 0.3, ...(rand() < 0.3 ? { offset: Math.floor(rand() * 4) } : {}) };
        expect(src.position(path, opts), `${JSON.stringify(path)} ${JSON.stringify(opts)} in\n${text}`).toEqual(
          whole.position(path, opts),
        );
      }
      if (fastRead) {
        fast++;
        expect(src.parsedWhole, text).toBe(false);
      }
    }
    // Most documents are in the subset; none of those needed the whole parse.
    expect(fast).toBeGreaterThan(1_000);
  });

  it("a position in one resource of a large stack parses that resource, not the stack", () => {
    const n = 20_000;
    const text =
      "name: big\nresources:\n" +
      Array.from(
        { length: n },
        (_, i) => `  r${i}:\n    type: t\n    properties:\n      name: p${i}\n      members: [a, "b \${x}"]\n`,
      ).join("");
    const src = new SourceDocument("/virtual/big.yaml", text);
    expect(src.position(["resources", "r12345", "properties", "members", 1], { offset: 3 })).toEqual({
      line: 3 + 5 * 12345 + 4,
      column: 24,
    });
    expect(src.position(["resources", "r19999"], { key: true })).toEqual({ line: 3 + 5 * 19999, column: 3 });
    // The nearest that exists: the value of properties, which starts at its first key.
    expect(src.position(["resources", "r7", "properties", "nope"])).toEqual({ line: 3 + 5 * 7 + 3, column: 7 });
    expect(src.parsedWhole).toBe(false);
  });

  // A warning in each resource (a lint rule every grant trips): past 1,000 positions the whole
  // text was parsed instead, because finding an entry scanned all the lines of the map it is in;
  // `validate` of 100,000 resources with a warning in most took 21 s and 1.5 GB (3.3 s without).
  it("positions in every resource of a large stack are found in their entries, never the whole text", () => {
    const n = 5_000;
    const text =
      "name: big\nresources:\n" +
      Array.from({ length: n }, (_, i) => `  r${i}:\n    type: t\n    properties:\n      name: p${i}\n`).join("");
    const src = new SourceDocument("/virtual/big.yaml", text);
    for (let i = 0; i < n; i++)
      expect(src.position(["resources", `r${i}`, "properties", "name"])).toEqual({ line: 3 + 4 * i + 3, column: 13 });
    expect(src.parsedWhole).toBe(false);
  });
});

describe("SimpleOutline.entry", () => {
  it("finds the entry of each of N resources reading each line a bounded number of times", () => {
    const n = 2_000;
    const text =
      "name: big\nresources:\n" +
      Array.from({ length: n }, (_, i) => `  r${i}:\n    type: t\n    properties:\n      name: p${i}\n`).join("") +
      "outputs:\n  o: x\n";
    const outline = new SimpleOutline(text);
    // Every read of a line's indent, counted.
    const lines = (outline as unknown as { lines: { indents: Int32Array } }).lines;
    let reads = 0;
    const indents = lines.indents;
    lines.indents = new Proxy(indents, {
      get(target, key) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, target) as unknown;
      },
    });
    for (let i = 0; i < n; i++) {
      const e = outline.entry(["resources", `r${i}`, "properties", "name"])!;
      expect(text.slice(e.start, e.end)).toBe(`      name: p${i}`);
    }
    // A scan of the resources' lines per lookup would be about 4n²/2 = 8,000,000 reads.
    expect(reads).toBeLessThanOrEqual(20 * 4 * n);
  });
});

/** A random block mapping in the fast subset: plain keys, block and flow values, quoted scalars. */
function fastYaml(rand: () => number, depth: number, indent: string): string {
  const keys = ["a", "b", "name", "members", "role", "properties", "x_1", "k.y"];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const scalar = () => pick(["v", "word", '"quoted ${var.x}"', "'it''s'", "true", "null", "ab${c}d", '""']);
  const flow = () => pick(["[a, b]", "[]", "{ k: v, m: [x, y] }", '["q", r]', "{}"]);
  const used = new Set<string>();
  let out = "\n";
  for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) {
    const k = pick(keys);
    if (used.has(k)) continue;
    used.add(k);
    const r = rand();
    if (depth < 3 && r < 0.35) out += `${indent}${k}:${fastYaml(rand, depth + 1, indent + "  ")}`;
    else if (r < 0.5)
      out +=
        `${indent}${k}:\n` +
        Array.from(
          { length: 1 + Math.floor(rand() * 3) },
          () => `${indent}${rand() < 0.5 ? "" : "  "}- ${scalar()}\n`,
        ).join("");
    else if (r < 0.7) out += `${indent}${k}: ${flow()}\n`;
    else out += `${indent}${k}: ${scalar()}${rand() < 0.2 ? " # note" : ""}\n`;
    if (rand() < 0.1) out += "\n";
  }
  return out;
}

function fastPath(rand: () => number): DocPath {
  const segs: (string | number)[] = ["a", "b", "name", "members", "role", "properties", "x_1", "k.y", "zz", 0, 1, 2];
  return Array.from({ length: Math.floor(rand() * 5) }, () => segs[Math.floor(rand() * segs.length)]!);
}
