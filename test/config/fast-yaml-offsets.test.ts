// parseSimpleYaml reads lines as offsets into the text (no string per line): it must accept and
// decline exactly the texts the definition it replaced did (test/config/reference/), with the same
// values, on the repository's YAML files, the bench stacks and many seeded awkward mutations
// (texts with a mapping in a sequence, which it declined, it reads as yaml does).
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { parseSimpleYaml } from "../../src/yaml/fast-yaml.js";
import { parseSimpleYaml as reference } from "./reference/fast-yaml-4615a91.js";
import { seededRandom } from "../support/seeded-random.js";
import { yamlFiles } from "../support/yaml-files.js";

const root = join(import.meta.dirname, "../..");

// The definition it replaced trimmed the non-ASCII white space String.prototype.trim knows
// (U+00A0, U+2000–U+200A, U+3000…) as if it were YAML's; to YAML it is content. A text with one of
// them is compared with yaml instead: the fast path declines it or gives yaml's value.
const TRIM_ONLY_SPACE = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/;

function same(text: string): void {
  if (TRIM_ONLY_SPACE.test(text)) {
    const got = parseSimpleYaml(text);
    if (got !== undefined) expect(got, JSON.stringify(text)).toStrictEqual(parse(text));
    return;
  }
  const want = reference(text);
  const got = parseSimpleYaml(text);
  if (want !== undefined) expect(got, JSON.stringify(text)).toStrictEqual(want);
  // Mappings in sequences ("- key: value") joined the subset later: what the definition declined,
  // the fast path may read only as yaml does.
  else if (got !== undefined) expect(got, JSON.stringify(text)).toStrictEqual(yamlValue(text));
}

function yamlValue(text: string): unknown {
  try {
    return parse(text);
  } catch (e) {
    return `yaml refuses it: ${String(e)}`;
  }
}

const BASE = [
  "# a comment",
  "name: s",
  "provider:",
  "  project: p   ",
  "  location: us-central1 # trailing",
  "resources:",
  "  b0:",
  "    type: cloudnative:backup/v1:RestorePlanIamBinding",
  "    properties:",
  "      name: rp-00000",
  "      role: 'roles/bench.role0'",
  '      members: [group:team0@example.com, "user:u0-0-a@example.com"]',
  "      condition: { title: t, expression: \"request.time < timestamp('2027-01-01T00:00:00Z')\" }",
  "    options:",
  "      dependsOn:",
  "        - b1",
  "        -   'b2'",
  "      protect: true",
  "  b1:",
  "    type: cloudnative:backup/v1:RestorePlanIamPolicy",
  "    properties:",
  "      bindings:",
  "        - { role: roles/x.a, members: [] }",
  "      auditConfigs: [{ service: allServices, auditLogConfigs: [{ logType: DATA_READ }] }]",
  "empty:",
  "list:",
  "- a",
  "- null",
  "",
];

// Fragments that touch every branch of the line reader: white space (including the non-ASCII
// kinds trim removes), markers, comments, quotes, escapes, anchors, flow, keys, unicode.
const PIECES = [
  "x",
  "7",
  " ",
  "  ",
  "\u00a0",
  "\u2003",
  "\u3000",
  "\n",
  "\n  ",
  "\n- ",
  "-",
  "- ",
  "#",
  " #",
  ":",
  ": ",
  "---",
  "...",
  "%",
  "'",
  "''",
  '"',
  '\\"',
  "\\",
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
  "?",
  "__proto__: x",
  "constructor: y",
  "null",
  "True",
  "é",
  "😀",
  "\t",
  "\r",
  "k:",
  "a: b",
];

function mutate(rand: () => number, text: string): string {
  const edits = 1 + Math.floor(rand() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rand() * (text.length + 1));
    const r = rand();
    if (r < 0.7) text = text.slice(0, at) + PIECES[Math.floor(rand() * PIECES.length)]! + text.slice(at);
    else text = text.slice(0, at) + text.slice(at + 1 + Math.floor(rand() * 3));
  }
  return text;
}

describe("YAML fast path over line offsets", () => {
  it("gives what the definition it replaced gives on every YAML file of the repository", () => {
    for (const f of yamlFiles(root)) same(readFileSync(f, "utf8"));
  });

  it("gives what the definition it replaced gives on seeded mutations of a stack", () => {
    const rand = seededRandom(20261123);
    const base = BASE.join("\n");
    let accepted = 0;
    for (let run = 0; run < 20_000; run++) {
      const text = mutate(rand, base);
      same(text);
      if (reference(text) !== undefined) accepted++;
    }
    // The comparison is not vacuous: many mutations stay in the fast subset.
    expect(accepted).toBeGreaterThan(4000);
  });

  it("gives what the definition it replaced gives on lines of white space, markers and ends", () => {
    for (const t of [
      "",
      "\n",
      "a: b",
      "a: b\n",
      "a:",
      "a: ",
      "a:  # c",
      "a:\n  - x\n  -\n",
      "a:\n- x\n-",
      "a:\n  b: c\n ---",
      "---\na: b",
      "a: b\n...",
      "%YAML 1.2\na: b",
      "a: b\n  \n",
      "\u00a0a: b",
      "a: b\u00a0",
      "a:\n\u00a0 b: c",
      "a: [x, y]\u3000",
      "a:\n  - - x",
      "a:\n  -\u00a0x",
    ]) {
      same(t);
    }
  });

  it("finds a duplicate key in a large map (counted at its end) as in a small one", () => {
    const rand = seededRandom(17);
    for (let run = 0; run < 2000; run++) {
      const size = 1 + Math.floor(rand() * 40);
      const keys = Array.from({ length: size }, (_, j) => `k${rand() < 0.03 ? Math.floor(rand() * size) : j}`);
      const nested = rand() < 0.5;
      const text = nested
        ? `top:\n${keys.map((k) => `  ${k}: v`).join("\n")}\nafter: 1x\n`
        : `${keys.map((k) => `${k}:\n  - a`).join("\n")}\n`;
      same(text);
    }
    expect(
      parseSimpleYaml(
        Array.from({ length: 30 }, (_, j) => `k${j}: v`)
          .concat("k3: w")
          .join("\n"),
      ),
    ).toBeUndefined();
    expect(parseSimpleYaml(Array.from({ length: 30 }, (_, j) => `k${j}: v`).join("\n"))).toBeDefined();
  });

  it("gives what the definition it replaced gives on the bench stack, when it is here", () => {
    const file = "/tmp/lab10k/stack.yaml";
    if (!existsSync(file)) return;
    const text = readFileSync(file, "utf8");
    const got = parseSimpleYaml(text);
    expect(got).toBeDefined();
    expect(got).toStrictEqual(reference(text));
  });
});
