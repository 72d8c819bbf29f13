// ${…} templates: parsing (escapes, whole vs concatenated, errors with offsets) and the helpers
// that carry unknown values through evaluation.
import { describe, expect, it } from "vitest";
import {
  UNKNOWN,
  access,
  containsUnknown,
  formatReference,
  hasInterpolation,
  isTemplateError,
  parseReference,
  parseTemplate,
  stripUnknown,
  unknownMask,
  type Accessor,
  type Reference,
  type Template,
  type TemplateError,
} from "../../src/language/expressions.js";

const ok = (s: string): Template => {
  const t = parseTemplate(s);
  if (isTemplateError(t)) throw new Error(`unexpected error for ${s}: ${t.message}`);
  return t;
};
const err = (s: string): TemplateError => {
  const t = parseTemplate(s);
  if (!isTemplateError(t)) throw new Error(`expected an error for ${s}`);
  return t;
};
/** The error of `s` says `fragment` and points at `offset`. */
const expectError = (s: string, fragment: string, offset: number): void => {
  const e = err(s);
  expect(e.message).toContain(fragment);
  expect(e.offset).toBe(offset);
};

describe("parseTemplate", () => {
  it("returns plain text as one literal part", () => {
    expect(ok("roles/viewer")).toEqual({ parts: ["roles/viewer"], whole: false });
    expect(ok("")).toEqual({ parts: [], whole: false });
  });

  it("treats a string that is exactly one interpolation as whole", () => {
    const t = ok("${lake.endpointUri}");
    expect(t.whole).toBe(true);
    expect(t.parts).toEqual([
      { root: "lake", path: [{ kind: "prop", name: "endpointUri" }], text: "lake.endpointUri", offset: 0 },
    ]);
  });

  it("splits concatenations into literal and reference parts with the offset of each ${", () => {
    const t = ok('serviceAccount:${lake.labels["owner"]}@${project}.iam');
    expect(t.whole).toBe(false);
    expect(t.parts).toEqual([
      "serviceAccount:",
      {
        root: "lake",
        path: [
          { kind: "prop", name: "labels" },
          { kind: "prop", name: "owner" },
        ],
        text: 'lake.labels["owner"]',
        offset: 15,
      },
      "@",
      { root: "project", path: [], text: "project", offset: 39 },
      ".iam",
    ]);
  });

  it("parses index accessors and names with dashes and underscores", () => {
    const t = ok("${my-thing_2.items[10].name}");
    expect(t.parts[0]).toMatchObject({
      root: "my-thing_2",
      path: [
        { kind: "prop", name: "items" },
        { kind: "index", index: 10 },
        { kind: "prop", name: "name" },
      ],
    });
  });

  it("trims white space inside the braces", () => {
    expect(ok("${  lake.uid }").parts[0]).toMatchObject({ root: "lake", text: "lake.uid", offset: 0 });
  });

  it("$$ stands for a literal $ and never starts an interpolation", () => {
    expect(ok("$${lake.uid}")).toEqual({ parts: ["${lake.uid}"], whole: false });
    expect(ok("costs $$5")).toEqual({ parts: ["costs $5"], whole: false });
    expect(ok("$$$${x}")).toEqual({ parts: ["$${x}"], whole: false });
  });

  it("an escaped $ followed by an interpolation yields both", () => {
    const t = ok("$$${x}");
    expect(t.whole).toBe(false);
    expect(t.parts).toEqual(["$", { root: "x", path: [], text: "x", offset: 2 }]);
  });

  it("keeps a lone $ that does not start ${ as text", () => {
    expect(ok("a$b$")).toEqual({ parts: ["a$b$"], whole: false });
  });

  it("reports an unterminated interpolation at its ${", () => {
    expect(err("serviceAccount:${lake.")).toEqual({ message: expect.stringContaining("unterminated"), offset: 15 });
    expect(err("${")).toMatchObject({ offset: 0 });
  });

  it("reports an empty interpolation", () => {
    expect(err("ab${ }")).toEqual({ message: expect.stringContaining("empty interpolation"), offset: 2 });
  });

  it("reports a missing property name after a dot at the character after the dot", () => {
    expectError("x${lake.}", 'expected a property name after "."', 8);
  });

  it("reports a reference that does not start with a name at its first character", () => {
    expectError("ab${1abc}", "is not a valid reference", 4);
  });

  it("reports bad and unclosed brackets at the [", () => {
    expect(err("${a[x]}")).toEqual({
      message: expect.stringContaining('must be a number or a "quoted" key'),
      offset: 3,
    });
    expectError("${a.b[0}", 'unclosed "["', 5);
  });

  it("reports an unexpected character", () => {
    expectError("${a b}", 'unexpected " "', 3);
  });

  it("returns the first error only, with its own offset", () => {
    expect(err("${ok} and ${bad.}").offset).toBe(16);
  });
});

describe("parseReference", () => {
  it("offsets errors by the position of the ${ it was found at", () => {
    const r = parseReference("a.", 10);
    expect(isTemplateError(r)).toBe(true);
    expect((r as TemplateError).offset).toBe(14);
  });
});

describe("hasInterpolation", () => {
  it.each([
    ["${a}", true],
    ["x${a}", true],
    ["$${a}", false],
    ["$$${a}", true],
    ["$$$${a}", false],
    ["plain", false],
    ["$", false],
  ])("%s → %s", (s, want) => {
    expect(hasInterpolation(s)).toBe(want);
  });

  it("answers as the pattern alone did (the substring check first is only a shortcut)", () => {
    const old = (s: string) => /(^|[^$])(\$\$)*\$\{/.test(s);
    const pieces = ["$", "{", "}", "a", "$$", "${", " ", "\n"];
    // Every string of up to 4 pieces.
    let texts = [""];
    for (let n = 0; n < 4; n++) texts = [...texts, ...texts.flatMap((t) => pieces.map((p) => t + p))];
    for (const t of new Set(texts)) expect(hasInterpolation(t), JSON.stringify(t)).toBe(old(t));
  });
});

describe("unknown values", () => {
  const value = { a: "x", b: UNKNOWN, c: [1, UNKNOWN], d: { e: UNKNOWN, f: 2 }, g: {} };

  it("containsUnknown looks inside lists and maps", () => {
    expect(containsUnknown(value)).toBe(true);
    expect(containsUnknown({ a: [1, { b: "c" }] })).toBe(false);
    expect(containsUnknown(UNKNOWN)).toBe(true);
  });

  it("unknownMask mirrors Terraform's after_unknown", () => {
    expect(unknownMask(value)).toEqual({ b: true, c: [false, true], d: { e: true } });
    expect(unknownMask(UNKNOWN)).toBe(true);
    expect(unknownMask("x")).toBe(false);
  });

  it("stripUnknown replaces unknowns by null, and JSON does the same", () => {
    expect(stripUnknown(value)).toEqual({ a: "x", b: null, c: [1, null], d: { e: null, f: 2 }, g: {} });
    expect(JSON.parse(JSON.stringify(value))).toEqual(stripUnknown(value));
  });

  it(
    "stripUnknown copies as Object.fromEntries(Object.entries(…)) did: " +
      "key order, index keys, __proto__ as an own key",
    () => {
      const reference = (v: unknown): unknown =>
        isUnknownValue(v)
          ? null
          : Array.isArray(v)
            ? v.map(reference)
            : v && typeof v === "object"
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reference(x)]))
              : v;
      const isUnknownValue = (v: unknown) => v === UNKNOWN;
      const tricky = JSON.parse('{"b": 1, "10": 2, "2": 3, "__proto__": {"x": 1}, "a": [{"c": null}]}') as Record<
        string,
        unknown
      >;
      tricky.u = UNKNOWN;
      const nullProto = Object.assign(Object.create(null) as object, { z: UNKNOWN, y: [UNKNOWN] });
      for (const v of [tricky, nullProto, [tricky, nullProto], value]) {
        const got = stripUnknown(v);
        const want = reference(v);
        expect(JSON.stringify(got)).toBe(JSON.stringify(want));
        expect(got).toStrictEqual(want);
      }
      const got = stripUnknown(tricky) as Record<string, unknown>;
      expect(Object.keys(got)).toEqual(["2", "10", "b", "__proto__", "a", "u"]);
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      expect(Object.hasOwn(got, "__proto__")).toBe(true);
    },
  );
});

describe("access", () => {
  const lake = { labels: { owner: "data-eng" }, backends: ["hive"] };
  const path = (s: string): Accessor[] => (ok("${x" + s + "}").parts[0] as Reference).path;

  it("follows properties and indexes", () => {
    expect(access(lake, path(".labels.owner"), "lake")).toEqual({ ok: true, value: "data-eng" });
    expect(access(lake, path(".backends[0]"), "lake")).toEqual({ ok: true, value: "hive" });
  });

  it("stays unknown below an unknown value", () => {
    expect(access({ a: UNKNOWN }, path(".a.b[3].c"), "x")).toEqual({ ok: true, value: UNKNOWN });
  });

  it("explains a missing field, listing the fields there are", () => {
    const r = access(lake, path(".labels.team"), "lake");
    expect(r).toEqual({ ok: false, message: 'lake.labels has no field "team"; it has owner' });
  });

  it("does not find the fields every JavaScript object inherits", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      expect(access(lake, path(`.labels.${name}`), "lake")).toEqual({
        ok: false,
        message: `lake.labels has no field "${name}"; it has owner`,
      });
    }
  });

  it("explains out-of-range indexes and wrong shapes", () => {
    expect(access(lake, path(".backends[2]"), "lake")).toEqual({
      ok: false,
      message: "lake.backends has 1 element(s); [2] is out of range",
    });
    expect(access(lake, path(".labels[0]"), "lake")).toMatchObject({
      ok: false,
      message: expect.stringContaining("is not a list"),
    });
    expect(access(lake, path(".backends.x"), "lake")).toMatchObject({
      ok: false,
      message: expect.stringContaining("is not an object"),
    });
  });

  it("takes a number index into a map as the key of its text, as Terraform does (a forEach's instances by key)", () => {
    const nums = { "0": { etag: "e0" }, "1": { etag: "e1" } };
    expect(access(nums, path("[1].etag"), "nums")).toEqual({ ok: true, value: "e1" });
    expect(access({ "7": "x" }, path("[7]"), "m")).toEqual({ ok: true, value: "x" });
    expect(access(nums, path("[2]"), "nums")).toEqual({
      ok: false,
      message: 'nums is not a list and has no key "2"; it has 0, 1',
    });
  });
});

describe("formatReference", () => {
  it("renders references back to source form, quoting keys that are not names", () => {
    expect(
      formatReference({
        root: "lake",
        path: [
          { kind: "prop", name: "labels" },
          { kind: "prop", name: "team.io/owner" },
          { kind: "index", index: 0 },
        ],
      }),
    ).toBe('lake.labels["team.io/owner"][0]');
  });
});
