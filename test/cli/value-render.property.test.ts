// What a reviewer reads of a value is the value: the human plan (an output created, destroyed or
// changed) and `converge show` (attributeLines) render any JSON value, nested lists, lists mixing
// maps, scalars and null, empty lists and maps, so that reading the text back gives exactly the
// JSON value. A reader of the Terraform-style text (below) parses it back; random values check it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/generated/schemas.js";
import { toPlain, type Line } from "../../src/diagnostics/lines.js";
import { planLines } from "../../src/cli/render/plan-text.js";
import { attributeLines } from "../../src/cli/render/values.js";

type Change = Plan["output_changes"][string];

function outputPlan(change: Change): Plan {
  return { resource_drift: [], resource_changes: [], output_changes: { o: change } } as unknown as Plan;
}

/** The lines of output `o` in the plan's "Changes to Outputs" section. */
function outputLines(change: Change): string[] {
  const lines = toPlain(planLines(outputPlan(change))).split("\n");
  const start = lines.indexOf("Changes to Outputs:");
  if (start < 0) throw new Error(lines.join("\n"));
  const end = lines.findIndex((l, i) => i > start && l === "");
  return lines.slice(start + 1, end);
}

const created = (v: unknown) =>
  outputLines({
    action: "create",
    before: null,
    after: v,
    after_unknown: false,
    before_sensitive: false,
    after_sensitive: false,
  });
const destroyed = (v: unknown) =>
  outputLines({
    action: "delete",
    before: v,
    after: null,
    after_unknown: false,
    before_sensitive: false,
    after_sensitive: false,
  });
const changed = (b: unknown, a: unknown) =>
  outputLines({
    action: "update",
    before: b,
    after: a,
    after_unknown: false,
    before_sensitive: false,
    after_sensitive: false,
  });
const shown = (v: unknown) =>
  toPlain(attributeLines("o", 1, v, "") as Line[])
    .trimEnd()
    .split("\n");

/**
 * Reads rendered lines back into a value. Each line is indentation, an optional change marker
 * (`+`, `-`, `~`), then `key = VALUE` (in a map) or `VALUE` (in a list) with an optional `,`, or
 * a closing `]`/`}`. VALUE is a JSON scalar (` -> null` after it on a removal), `[]`, `{}`, or `[`
 * or `{` opening a block. `markers` collects the marker of every value line.
 */
class Reader {
  i = 0;
  readonly markers: string[] = [];
  constructor(private readonly lines: string[]) {}

  /** The whole text: one attribute `o = VALUE`. */
  attribute(): unknown {
    const { key, rest } = this.entry();
    if (key !== "o") throw new Error(`expected o, got ${String(key)}`);
    const v = this.value(rest);
    if (this.i !== this.lines.length)
      throw new Error(`trailing lines from ${this.i}: ${this.lines.slice(this.i).join("\n")}`);
    return v;
  }

  /** The whole text: `o = [` and its elements, each with its marker. */
  list(): { marker: string; value: unknown }[] {
    const { key, rest } = this.entry();
    if (key !== "o" || rest !== "[") throw new Error(`expected o = [, got ${this.lines[0]}`);
    const out: { marker: string; value: unknown }[] = [];
    while (!this.closes("]")) {
      const { key: k, rest: r } = this.entry();
      if (k !== undefined) throw new Error(`key ${k} in a list`);
      const marker = this.markers[this.markers.length - 1]!;
      out.push({ marker, value: this.value(r) });
    }
    if (this.i !== this.lines.length) throw new Error("trailing lines");
    return out;
  }

  /** The next line, its marker taken off: a key (when it has one) and the rest. */
  private entry(): { key?: string; rest: string } {
    const line = this.lines[this.i++];
    if (line === undefined) throw new Error("unexpected end");
    let text = line.trimStart();
    const m = /^([+\-~]) /.exec(text);
    this.markers.push(m ? m[1]! : " ");
    if (m) text = text.slice(2);
    if (text.startsWith('"')) {
      const s = stringToken(text);
      const after = /^\s*= /.exec(text.slice(s.length));
      if (after) return { key: JSON.parse(s) as string, rest: text.slice(s.length + after[0].length) };
      return { rest: text };
    }
    const id = /^([A-Za-z_][A-Za-z0-9_-]*)\s*= /.exec(text);
    return id ? { key: id[1]!, rest: text.slice(id[0].length) } : { rest: text };
  }

  /** A value starting with `text` (on the line just read), its block read to the end. */
  private value(text: string): unknown {
    const t = text.replace(/,$/, "");
    if (t === "[]") return [];
    if (t === "{}") return {};
    if (t === "[") {
      const out: unknown[] = [];
      while (!this.closes("]")) {
        const { key, rest } = this.entry();
        if (key !== undefined) throw new Error(`key ${key} in a list at line ${this.i}`);
        out.push(this.value(rest));
      }
      return out;
    }
    if (t === "{") {
      const out: Record<string, unknown> = {};
      while (!this.closes("}")) {
        const { key, rest } = this.entry();
        if (key === undefined) throw new Error(`no key in a map at line ${this.i}: ${this.lines[this.i - 1]}`);
        Object.defineProperty(out, key, {
          value: this.value(rest),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return scalar(text);
  }

  private closes(bracket: string): boolean {
    const line = this.lines[this.i];
    if (line === undefined) throw new Error(`unclosed ${bracket}`);
    if (line.trim().replace(/,$/, "") !== bracket) return false;
    this.i++;
    return true;
  }
}

/** The JSON string token at the start of `text`. */
function stringToken(text: string): string {
  let j = 1;
  while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
  if (j >= text.length) throw new Error(`unterminated string: ${text}`);
  return text.slice(0, j + 1);
}

function scalar(text: string): unknown {
  const token = text.startsWith('"') ? stringToken(text) : (/^[^,\s]+/.exec(text)?.[0] ?? "");
  const rest = text.slice(token.length);
  if (!/^(,)?( -> null)?$/.test(rest)) throw new Error(`not a scalar: ${text}`);
  return JSON.parse(token) as unknown;
}

/** Keys sorted, so that two values compare by content. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

const read = (lines: string[]) => {
  const r = new Reader(lines);
  return { value: r.attribute(), markers: r.markers };
};
/** The value as JSON carries it (-0 is 0). */
const asJson = (v: unknown) => canonical(JSON.parse(JSON.stringify(v)));

const tricky = fc.constantFrom(
  "a",
  "Z",
  " ",
  '"',
  "\\",
  "=",
  ",",
  "[",
  "]",
  "{",
  "}",
  "-",
  ">",
  "#",
  ":",
  "é",
  "\u{1F600}",
  "0",
  "_",
  "\t",
);
const text = fc.oneof(
  fc.string({ unit: tricky, maxLength: 8 }),
  fc.string({ maxLength: 6 }),
  fc.constantFrom("", "null", "true", "5", "x -> null", "a = 1", "[]", "{}"),
);
const scalarArb = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const { value: jsonValue } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalarArb, tie("list"), tie("map")),
  list: fc.array(tie("value"), { maxLength: 5 }),
  map: fc.dictionary(text, tie("value"), { maxKeys: 4 }),
}));
/** Lists and maps at the top (an output's value), anything inside. */
const container = fc.oneof(fc.array(jsonValue, { maxLength: 6 }), fc.dictionary(text, jsonValue, { maxKeys: 5 }));

describe("the human plan shows exactly the value", () => {
  it("the tester's nested list and mixed list", () => {
    expect(created([[["x"]], [[]], []])).toEqual([
      "  + o = [",
      "      + [",
      "          + [",
      '              + "x",',
      "            ],",
      "        ],",
      "      + [",
      "          + [],",
      "        ],",
      "      + [],",
      "    ]",
    ]);
    expect(created([{ a: 1 }, 5, true, null])).toEqual([
      "  + o = [",
      "      + {",
      "          + a = 1",
      "        },",
      "      + 5,",
      "      + true,",
      "      + null,",
      "    ]",
    ]);
  });

  it("numbers and booleans in a list are not shown as strings", () => {
    expect(created([1, true, null, "1"])).toEqual([
      "  + o = [",
      "      + 1,",
      "      + true,",
      "      + null,",
      '      + "1",',
      "    ]",
    ]);
  });

  it("a created value reads back as itself, every line marked +", () => {
    fc.assert(
      fc.property(container, (v) => {
        const { value, markers } = read(created(v));
        expect(canonical(value)).toBe(asJson(v));
        expect(new Set(markers)).toEqual(new Set(["+"]));
      }),
      { numRuns: 400 },
    );
  });

  it("a destroyed value reads back as itself, every line marked -", () => {
    fc.assert(
      fc.property(container, (v) => {
        const { value, markers } = read(destroyed(v));
        expect(canonical(value)).toBe(asJson(v));
        expect(new Set(markers)).toEqual(new Set(["-"]));
      }),
      { numRuns: 400 },
    );
  });

  it("a list changed element by element shows removed, added and kept elements as they are", () => {
    fc.assert(
      fc.property(
        fc.array(jsonValue, { maxLength: 4 }),
        fc.array(jsonValue, { maxLength: 4 }),
        fc.array(jsonValue, { maxLength: 3 }),
        (kept, gone, added) => {
          // Lists that are not all maps: every element is shown, none hidden.
          const before = [...kept, ...gone, 7];
          const after = [...kept, ...added, 7];
          if (asJson(before) === asJson(after)) return;
          const lines = changed(before, after);
          expect(lines[0]).toBe("  ~ o = [");
          const elements = new Reader(lines).list();
          const value = (keep: string) => canonical(elements.filter((e) => e.marker !== keep).map((e) => e.value));
          expect(value("+")).toBe(asJson(before));
          expect(value("-")).toBe(asJson(after));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a nested list's change shows the old and the new element", () => {
    expect(changed([["a"], [1]], [["a"], [2]])).toEqual([
      "  ~ o = [",
      "        [",
      '            "a",',
      "        ],",
      "      - [",
      "          - 1,",
      "        ],",
      "      + [",
      "          + 2,",
      "        ],",
      "    ]",
    ]);
    expect(changed([1, 2], [1, 3])).toEqual(["  ~ o = [", "        1,", "      - 2,", "      + 3,", "    ]"]);
  });

  it("a value that changes shape shows the old value and the new one", () => {
    expect(changed("x", ["x"])).toEqual(['  - o = "x"', "  + o = [", '      + "x",', "    ]"]);
    expect(changed({ k: [1] }, { k: 1 })).toEqual([
      "  ~ o = {",
      "      - k = [",
      "          - 1,",
      "        ]",
      "      + k = 1",
      "    }",
    ]);
  });

  it("an element known only after apply says so, not null", () => {
    const change: Change = {
      action: "create",
      before: null,
      after: [1, null, { a: null }],
      after_unknown: [false, true, { a: true }],
      before_sensitive: false,
      after_sensitive: false,
    };
    expect(outputLines(change)).toEqual([
      "  + o = [",
      "      + 1,",
      "      + (known after apply),",
      "      + {",
      "          + a = (known after apply)",
      "        },",
      "    ]",
    ]);
  });

  it("duplicate maps in a list are each shown", () => {
    expect(created([{ a: 1 }, { a: 1 }])).toEqual([
      "  + o = [",
      "      + {",
      "          + a = 1",
      "        },",
      "      + {",
      "          + a = 1",
      "        },",
      "    ]",
    ]);
  });
});

describe("converge show renders exactly the value", () => {
  it("the tester's nested list and mixed list", () => {
    expect(shown([[["x"]], [[]], []])).toEqual([
      "o = [",
      "    [",
      "        [",
      '            "x",',
      "        ],",
      "    ],",
      "    [",
      "        [],",
      "    ],",
      "    [],",
      "]",
    ]);
    expect(shown([{ a: 1 }, 5, true, null])).toEqual([
      "o = [",
      "    {",
      "        a = 1",
      "    },",
      "    5,",
      "    true,",
      "    null,",
      "]",
    ]);
  });

  it("any value reads back as itself", () => {
    fc.assert(
      fc.property(fc.oneof(jsonValue, container), (v) => {
        expect(canonical(read(shown(v)).value)).toBe(asJson(v));
      }),
      { numRuns: 400 },
    );
  });
});
