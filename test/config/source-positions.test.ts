// SourceDocument.position: where a value (or its key) is, for diagnostics. The same answers as
// yaml's own lookup (Document.getIn), and at a cost that does not grow with the size of the maps
// on the way: yaml scans a map's pairs for each key, so a position for each of N resources (an
// error per unreadable policy, a lint warning per resource) cost N²/2 pair visits: minutes at
// 100,000 resources.
import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import type * as Yaml from "yaml";
import { SourceDocument, type DocPath } from "../../src/config/source.js";
import { seededRandom } from "../support/seeded-random.js";

// The same module instance as src/config/yaml-lib.ts (required, not imported).
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
    return "\n" + Array.from({ length: n }, () => `${indent}- ${randomYaml(rand, depth + 1, indent + "  ").trimStart()}`).join("");
  }
  const n = 1 + Math.floor(rand() * 4);
  return "\n" + Array.from({ length: n }, () => `${indent}${keys[Math.floor(rand() * keys.length)]}:${randomYaml(rand, depth + 1, indent + "  ")}`).join("");
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
        expect(src.position(path, { key }), `${JSON.stringify(path)} key=${key} in\n${text}`).toEqual(reference(src, path, { key }));
      }
    }
  });

  it("positions of all 20,000 resources of a stack visit each map's pairs a bounded number of times", () => {
    const n = 20_000;
    const text = "name: big\nresources:\n" + Array.from({ length: n }, (_, i) => `  r${i}:\n    type: t\n    properties:\n      name: p${i}\n`).join("");
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
});
