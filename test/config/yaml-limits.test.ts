// Issue 12, class 2: the limits on a stack's YAML structure (src/yaml/yaml-limits.ts) at their
// edges, on both parsing paths (the fast path declines what it cannot check; yaml's path reports).
import { describe, expect, it } from "vitest";
import { parseSimpleYaml } from "../../src/yaml/fast-yaml.js";
import { parseStack } from "../../src/config/load.js";
import { MAX_ALIAS_USES, MAX_DEPTH } from "../../src/yaml/yaml-limits.js";

const FILE = "/virtual/stack.yaml";
const load = (text: string) => parseStack(FILE, text);
const errors = (text: string) =>
  load(text)
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => `${d.line}:${d.column} ${d.summary}`);

/** A stack whose variable `a` holds maps nested so that the deepest is at `depth` (the root is level 1). */
function blockDepth(depth: number): string {
  let text = "name: t\nvariables:\n  a:\n";
  for (let level = 3; level < depth; level++) text += `${" ".repeat(2 * (level - 1))}k:\n`;
  return text + `${" ".repeat(2 * (depth - 1))}k: end\n`;
}
/** The same with one-line flow lists. */
const flowDepth = (depth: number) => `name: t\nvariables:\n  a: ${"[".repeat(depth - 2)}x${"]".repeat(depth - 2)}\n`;

describe(`nesting: at most ${MAX_DEPTH} levels`, () => {
  it.each([
    ["block maps", blockDepth],
    ["flow lists", flowDepth],
  ])("%s: 64 levels load, one more is an error at the first map or list too deep", (_, make) => {
    expect(load(make(MAX_DEPTH)).stack).toBeDefined();
    const deeper = make(MAX_DEPTH + 1);
    const [e] = errors(deeper);
    expect(e).toMatch(/^\d+:\d+ nested more than 64 levels deep$/);
    const [line, column] = e!.split(" ")[0]!.split(":").map(Number);
    const at = deeper.split("\n")[line! - 1]!.slice(column! - 1);
    // the 65th level starts there: the last "k" of the maps, or the innermost "[" of the lists
    expect(at.startsWith("k: end") || at.startsWith("[x]")).toBe(true);
  });

  it("the fast path declines deep documents, so yaml's path checks them", () => {
    expect(parseSimpleYaml(blockDepth(MAX_DEPTH - 2))).toBeDefined();
    expect(parseSimpleYaml(blockDepth(MAX_DEPTH + 1))).toBeUndefined();
  });

  it("100,000 levels: an error, no stack overflow", () => {
    // (How fast is a benchmark's business, not a test's: it used to assert under 5 s, and took 7 s
    // on a loaded machine.)
    // the 63rd "{a: " (4 characters each, from column 6) opens level 65
    expect(errors(`name: t\nvariables:\n  a: ${"{a: ".repeat(100_000)}x${"}".repeat(100_000)}\n`)).toEqual([
      `3:${6 + 62 * 4} nested more than 64 levels deep`,
    ]);
  });

  it("depth through an alias counts where the alias is", () => {
    const text =
      `name: t\nvariables:\n  a: &d ${"[".repeat(40)}x${"]".repeat(40)}\n  b: ${"[".repeat(20)}*d` +
      `${"]".repeat(20)}\n  c: ${"[".repeat(30)}*d${"]".repeat(30)}\n`;
    expect(errors(text)).toEqual([`5:${6 + 30} nested more than 64 levels deep through alias "*d"`]);
  });
});

describe("aliases", () => {
  it("an alias with no anchor before it is an error at the alias (an anchor after it does not count)", () => {
    expect(errors("name: t\nvariables:\n  a: *later\n  b: &later x\n")).toEqual([
      '3:6 undefined alias "*later": no anchor &later comes before it',
    ]);
  });

  it("an alias refers to the closest anchor of that name before it", () => {
    const r = load("name: t\nvariables:\n  a: &x one\n  b: *x\n  c: &x [two]\n  d: *x\n");
    expect(r.diagnostics).toEqual([]);
    expect([...r.stack!.variables.values()].map((v) => v.value)).toEqual(["one", "one", ["two"], ["two"]]);
  });

  it("an alias inside its own anchor is an error, not a circular value", () => {
    expect(errors("name: t\nvariables:\n  a: &m { b: [*m] }\n")).toEqual([
      '3:15 alias "*m" is inside the node it refers to',
    ]);
  });

  it(`an anchor may be repeated ${MAX_ALIAS_USES} times, not once more`, () => {
    const uses = (n: number) =>
      `name: t\nvariables:\n  a: &a [x]\n${Array.from({ length: n }, (_, i) => `  v${i}: *a\n`).join("")}`;
    expect(load(uses(MAX_ALIAS_USES)).stack).toBeDefined();
    expect(errors(uses(MAX_ALIAS_USES + 1))).toEqual([
      `${4 + MAX_ALIAS_USES}:${6 + String(MAX_ALIAS_USES).length} too many aliases: anchor ` +
        `"&a" is repeated more than 100 times (here by alias "*a")`,
    ]);
  });

  it("a chain of anchors each used once is fine (yaml's own count would double at each link)", () => {
    let text = "name: t\nvariables:\n  a0: &a0 [x]\n";
    for (let i = 1; i <= 30; i++) text += `  a${i}: &a${i} [*a${i - 1}]\n`;
    expect(load(text).diagnostics).toEqual([]);
  });

  it("a billion laughs: an error at the alias that goes over, found quickly", () => {
    let text = "name: t\nvariables:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (let i = 1; i <= 9; i++)
      text += `  l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(", ")}]\n`;
    const t0 = Date.now();
    const [e] = errors(text);
    // l1 repeats l0 10 times, and the 10th *l1 of l2 makes it 101
    expect(e).toBe(
      `5:${12 + 9 * 5} too many aliases: anchor "&l0" is repeated more than 100 times (here by alias "*l1")`,
    );
    // Expanded, the document would hold 10^10 strings: the bound is what is tested, with a margin
    // no loaded machine comes near (it used to be 2 s).
    expect(Date.now() - t0).toBeLessThan(60_000);
  });

  it("the fast path never reads anchors or aliases", () => {
    for (const text of ["name: t\na: &x b\nc: *x\n", "name: t\na: [&x b, *x]\n", "name: t\na: { k: *x }\n"])
      expect(parseSimpleYaml(text)).toBeUndefined();
  });
});
