// Texts read again by the fast YAML path are given back as read the first time (src/yaml/repeats.ts):
// the same values as yaml's, never a text that only shares its slot, never a shared collection.
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { parseSimpleYaml } from "../../src/yaml/fast-yaml.js";
import { Repeats } from "../../src/yaml/repeats.js";

describe("texts read again", () => {
  it("tells apart texts that share a slot (same length, first and last character)", () => {
    const text = "a: axb\nb: ayb\nc: axb\naxb: x1\nayb:\n  axb: ayb\n";
    expect(parseSimpleYaml(text)).toBeDefined();
    expect(parseSimpleYaml(text)).toEqual(parse(text));
  });

  it("keeps a quoted text apart from the same word unquoted", () => {
    const text = "a: true\nb: 'true'\nc: true\nd: \"null\"\ne: null\nf: 'it''s'\ng: 'it''s'\n";
    expect(parseSimpleYaml(text)).toBeDefined();
    expect(parseSimpleYaml(text)).toEqual(parse(text));
  });

  it("never shares a collection written twice", () => {
    const doc = parseSimpleYaml("a: [x]\nb: [x]\nc: {k: v}\nd: {k: v}\n")!;
    expect(doc).toEqual({ a: ["x"], b: ["x"], c: { k: "v" }, d: { k: "v" } });
    expect(doc.a).not.toBe(doc.b);
    expect(doc.c).not.toBe(doc.d);
  });

  it("reads a text once and keeps nothing when reading it throws", () => {
    const r = new Repeats<unknown>();
    let calls = 0;
    const read = (raw: string) => (calls++, raw.toUpperCase());
    expect(r.read("xx abc yy abc", 3, 6, read, 0)).toBe("ABC");
    expect(r.read("xx abc yy abc", 10, 13, read, 0)).toBe("ABC");
    expect(calls).toBe(1);
    const boom = () => {
      throw new Error("no");
    };
    expect(() => r.read("q", 0, 1, boom, 0)).toThrow("no");
    expect(r.read("q", 0, 1, read, 0)).toBe("Q");
  });
});
