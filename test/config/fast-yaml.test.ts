// The fast path must never disagree with the yaml library: wherever parseSimpleYaml accepts a
// text, its value equals yaml's; otherwise it declines (undefined) and yaml is used.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { parseSimpleYaml } from "../../src/yaml/fast-yaml.js";
import { yamlFiles } from "../support/yaml-files.js";

const root = join(import.meta.dirname, "../..");

// Characters String.prototype.trim and \s treat as white space but YAML does not (YAML's white
// space is only space and tab, its line breaks LF and CR): to yaml they are content.
const UNICODE_SPACES = [
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u2003",
  "\u200a",
  "\u202f",
  "\u205f",
  "\u3000",
  "\u000b",
  "\u000c",
];
const UNICODE_SPACED = UNICODE_SPACES.flatMap((c) => [c, `${c}x`, `x${c}`, `a${c}#b`, `${c}- x`]);

function agrees(text: string): boolean {
  let expected: unknown;
  try {
    expected = parse(text, { maxAliasCount: 100 });
  } catch {
    // yaml refuses it: the fast path must decline too.
    return parseSimpleYaml(text) === undefined;
  }
  const fast = parseSimpleYaml(text);
  if (fast === undefined) return true;
  expect(fast).toEqual(expected);
  return true;
}

const scalar = fc.oneof(
  fc.constantFrom(
    "true",
    "false",
    "null",
    "yes",
    "no",
    "on",
    "off",
    "~",
    "0",
    "1.5",
    "-1",
    "0x1F",
    "1e3",
    ".inf",
    "NaN",
    "",
    " ",
    "a: b",
    "a #b",
    "#c",
    "- x",
    "'q'",
    '"d"',
    "${x.y}",
    "$$",
    "user:a@example.com",
    "roles/x.y",
    'request.time < timestamp("2027-01-01T00:00:00Z")',
    "é",
    "a\tb",
    "a\nb",
    ...UNICODE_SPACED,
  ),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const keyArb = fc.oneof(
  fc.constantFrom(
    "name",
    "type",
    "members",
    "fn::invoke",
    "a.b",
    "x-y",
    "1",
    "true",
    "null",
    "on",
    "a b",
    "k:",
    "__proto__",
  ),
  fc.string({ minLength: 1, maxLength: 8 }),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    scalar,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(keyArb, tie("v"), { maxKeys: 4 }),
  ),
})).v;

/** `base`'s lines with each edit's text inserted at its column (past the end: at the end). */
function edited(base: readonly string[], edits: readonly { line: number; at: number; text: string }[]): string {
  const lines = [...base];
  for (const e of edits) {
    const l = lines[e.line]!;
    const at = Math.min(e.at, l.length);
    lines[e.line] = l.slice(0, at) + e.text + l.slice(at);
  }
  return lines.join("\n");
}

describe("YAML fast path", () => {
  it("agrees with yaml on every YAML file in the repository", () => {
    const files = yamlFiles(root);
    expect(files.length).toBeGreaterThan(20);
    let accepted = 0;
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      agrees(text);
      if (parseSimpleYaml(text) !== undefined) accepted++;
    }
    // The fast path must actually be used on ordinary stacks.
    expect(accepted).toBeGreaterThan(5);
  });

  it("agrees with yaml on generated documents in block and flow styles", () => {
    fc.assert(
      fc.property(
        fc.dictionary(keyArb, value, { maxKeys: 6 }),
        fc.constantFrom<"block" | "flow" | "mixed">("block", "flow", "mixed"),
        (doc, style) => {
          const text = stringify(doc, { collectionStyle: style === "mixed" ? "any" : style, lineWidth: 0 });
          return agrees(text);
        },
      ),
      { numRuns: 3000, seed: 20261122 },
    );
  });

  it("accepts and agrees on most stack-like documents (the comparison is not vacuous)", () => {
    let accepted = 0;
    const stackish = fc.dictionary(
      fc.constantFrom("name", "type", "members", "role", "a"),
      fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom("x", "y"), fc.string({ maxLength: 5 })),
      ),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(stackish, (doc) => {
        const text = stringify(doc);
        if (parseSimpleYaml(text) !== undefined) accepted++;
        return agrees(text);
      }),
      { numRuns: 2000, seed: 42 },
    );
    expect(accepted).toBeGreaterThan(600);
  });

  it("agrees with yaml on hand-mutated texts (comments, quotes, indentation, odd tokens)", () => {
    const base = readFileSync(join(root, "examples/quickstart/stack.yaml"), "utf8").split("\n");
    const edits = fc.array(
      fc.record({
        line: fc.nat({ max: base.length - 1 }),
        at: fc.nat({ max: 60 }),
        text: fc.constantFrom(
          " ",
          "  ",
          "#",
          " # c",
          ":",
          ": ",
          "-",
          "'",
          '"',
          "{",
          "}",
          "[",
          "]",
          ",",
          "&a ",
          "*a",
          "!!str ",
          "|",
          ">",
          "\t",
          "\\",
          "?",
          "%",
          "@",
          "`",
          ...UNICODE_SPACES,
        ),
      }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(edits, (es) => {
        return agrees(edited(base, es));
      }),
      { numRuns: 3000, seed: 7 },
    );
  });
  it("reads mappings in sequences (moved: entries, auditConfigs in block style) as yaml does", () => {
    // Declined before: a stack of 100,000 resources with one moved: entry took 20 s to load, not 2.
    const text = [
      "name: s",
      "moved:",
      "  - from: old",
      "    to: new",
      "  -   from: a # a comment",
      "      to: b",
      "resources:",
      "  p:",
      "    type: cloudnative:backup/v1:RestorePlanIamPolicy",
      "    properties:",
      "      name: rp",
      "      bindings:",
      "      - role: roles/x",
      "        members: [user:a@example.com]",
      "        condition:",
      "          title: t",
      "          expression: request.time < timestamp('2027-01-01T00:00:00Z')",
      "      auditConfigs:",
      "        - service: allServices",
      "          auditLogConfigs:",
      "            - logType: DATA_READ",
      "              exemptedMembers:",
      "                - user:auditor@example.com",
      "            - logType: ADMIN_READ",
      "",
    ].join("\n");
    const fast = parseSimpleYaml(text);
    expect(fast).toEqual(parse(text));
    expect(fast).toMatchObject({
      moved: [
        { from: "old", to: "new" },
        { from: "a", to: "b" },
      ],
    });
    // Misaligned keys, odd dashes and indentation around them: declined or read as yaml reads them.
    const base = text.split("\n");
    const edits = fc.array(
      fc.record({
        line: fc.nat({ max: base.length - 1 }),
        at: fc.nat({ max: 14 }),
        text: fc.constantFrom(" ", "  ", "- ", "-", "#", ": ", ":", "a: 1", "? ", "'", "[", "{"),
      }),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(edits, (es) => {
        return agrees(edited(base, es));
      }),
      { numRuns: 3000, seed: 11 },
    );
  });

  it("treats only space as indentation and trailing space: U+00A0, U+2000–U+200A, U+3000… are content", () => {
    for (const c of UNICODE_SPACES) {
      const texts = [
        `a:\n  b: x\n${c}${c}c: y\n`,
        `a:\n${c} b: x\n`,
        `a:\n  - x${c}\n  - ${c}y\n`,
        `a: x${c}\nb: [${c}y, z${c}]\nc: {k: ${c}v}\n`,
        `a: x${c}# not a comment\n`,
        `a: 'x'${c}# c\n`,
        `a:${c}x\n`,
        `a: x\n${c}\nb: y\n`,
        `${c}a: x\n`,
      ];
      for (const text of texts) expect(agrees(text), JSON.stringify(text)).toBe(true);
    }
  });

  it("reads nested one-line flow collections (a policy resource's bindings) as yaml does", () => {
    const text = [
      "resources:",
      "  p:",
      "    type: cloudnative:backup/v1:RestorePlanIamPolicy",
      "    properties:",
      "      name: rp-1",
      "      bindings:",
      "        - { role: roles/x.a, members: [group:t@example.com, 'user:u@example.com'] }",
      "        - {role: roles/x.b, members: [], condition: {title: t, expression: " +
        "\"request.time < timestamp('2027-01-01T00:00:00Z')\"}}",
      "      auditConfigs: [{ service: allServices, auditLogConfigs: [{ logType: " +
        "DATA_READ, exemptedMembers: [user:a@example.com] }] }]",
      "",
    ].join("\n");
    const fast = parseSimpleYaml(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(parse(text));
    // Declined (yaml decides): empty items, trailing commas, junk after a collection, a key without ": ".
    for (const bad of [
      "[a, , b]",
      "[a, b,]",
      "[[a] b]",
      "{a}",
      "{a, b: c}",
      "[{a: b}, {a: b, a: c}]",
      "[a: b]",
      "[{k: [x]}]x",
    ]) {
      expect(parseSimpleYaml(`k: ${bad}\n`), bad).toBeUndefined();
    }
    // A comma inside quotes is not a separator.
    expect(parseSimpleYaml(`k: ["a,b", 'c, d']\n`)).toEqual(parse(`k: ["a,b", 'c, d']\n`));
  });

  it("agrees with yaml on hand-mutated nested flow collections", () => {
    const base =
      "a:\n  - { role: r, members: [m1, 'm2'], c: {t: x} }\n  - [[a, b], {k: " +
      "v}]\nb: [{ s: allServices, l: [{ t: R, e: [u] }] }]\n";
    const edits = fc.array(
      fc.record({
        at: fc.nat({ max: base.length }),
        text: fc.constantFrom(
          " ",
          ",",
          ":",
          ": ",
          "[",
          "]",
          "{",
          "}",
          "'",
          '"',
          "#",
          " #",
          "-",
          "&a ",
          "*a",
          "?",
          "\n",
          "\n  ",
          "k: ",
          "1",
          ...UNICODE_SPACES,
        ),
      }),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(edits, (es) => {
        let text = base;
        for (const e of es)
          text = text.slice(0, Math.min(e.at, text.length)) + e.text + text.slice(Math.min(e.at, text.length));
        return agrees(text);
      }),
      { numRuns: 3000, seed: 11 },
    );
  });
});

describe("YAML fast path: nested flow collections", () => {
  it("reads one-line flow collections inside flow collections, as yaml does", () => {
    const text = `name: s
resources:
  p:
    properties:
      bindings:
        - { role: roles/a, members: [group:t@example.com, "user:a,b@example.com", 'it''s'] }
        - { role: roles/b, members: [], condition: { title: t, expression: x } }
      nested: [[a, [b]], {}, { k: [] }]
`;
    const fast = parseSimpleYaml(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(parse(text));
  });

  it("declines unbalanced, trailing-comma or over-deep flow collections (yaml then reads them)", () => {
    for (const v of ["[a, [b]", "[a]]", "{ a: [b }", "[a, b,]", `${"[".repeat(70)}${"]".repeat(70)}`])
      expect(parseSimpleYaml(`k: ${v}\n`), v).toBeUndefined();
  });
});
