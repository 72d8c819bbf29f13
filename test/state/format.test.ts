import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { validate } from "../../src/schemas/index.js";
import { defaultStatePath, newState, parseState, serializeState } from "../../src/state/index.js";
import { resource, tempDir } from "./helpers.js";

describe("state format", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it("defaultStatePath is {stack file's directory}/state/{stack}.json", () => {
    expect(defaultStatePath("/w", "dev")).toBe(join("/w", "state", "dev.json"));
  });

  it("newState is empty, valid and has a fresh lineage", () => {
    const a = newState("dev");
    const b = newState("dev");
    expect(a).toMatchObject({ version: 1, serial: 0, stack: "dev", resources: [], outputs: {} });
    expect(a.lineage).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(a.lineage).not.toBe(b.lineage);
    expect(validate("state.schema.json", a)).toEqual([]);
  });

  it(
    "serialises with schema key order at the top and in resources, " +
      "sorted keys elsewhere, 2 spaces, trailing newline",
    () => {
      const s = newState("dev");
      const shuffled = {
        outputs: { z: 1, a: { y: 2, b: 3 } },
        resources: [
          { dependencies: ["x"], outputs: {}, inputs: { role: "r", member: "m" }, id: "i", type: "t", address: "a" },
        ],
        stack: "dev",
        serial: 3,
        lineage: s.lineage,
        version: 1 as const,
      };
      const text = serializeState(shuffled);
      expect(text.endsWith("}\n")).toBe(true);
      expect(Object.keys(JSON.parse(text))).toEqual(["version", "lineage", "serial", "stack", "resources", "outputs"]);
      expect(Object.keys(JSON.parse(text).resources[0])).toEqual([
        "address",
        "type",
        "id",
        "inputs",
        "outputs",
        "dependencies",
      ]);
      expect(text).toContain('"inputs": {\n        "member": "m",\n        "role": "r"\n      }');
      expect(text).toContain('"outputs": {\n    "a": {\n      "b": 3,\n      "y": 2\n    },\n    "z": 1\n  }');
      // Same content, other insertion order: same bytes.
      expect(serializeState({ ...shuffled, outputs: { a: { b: 3, y: 2 }, z: 1 } })).toBe(text);
    },
  );

  it("parses a valid state", () => {
    const s = { ...newState("dev"), resources: [resource("a")] };
    expect(parseState(serializeState(s), "state/dev.json")).toEqual(s);
  });

  it("invalid JSON is a UserError naming the file and the position", () => {
    const file = join(dir, "dev.json");
    let err: unknown;
    try {
      parseState('{\n  "version": 1,\n  oops\n}', file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const d = (err as UserError).diagnostics[0]!;
    expect(d.summary).toContain(file);
    expect(d.summary).toContain("not valid JSON");
    expect(d.file).toBe(file);
    expect(d.line).toBe(3);
    expect(d.summary).toContain("line 3, column 3");
    expect(d.detail).toContain("No backup");
  });

  it("an empty file is a UserError", () => {
    expect(() => parseState("", "s.json")).toThrow(UserError);
    expect(() => parseState("", "s.json")).toThrow(/s\.json is empty/);
    // Blank is empty too, whatever the blanks: line ends, tabs, a no-break space, U+2028.
    expect(() => parseState(" \r\n\t\u00a0\u2028\n", "s.json")).toThrow(/s\.json is empty/);
    expect(() => parseState("\n x \n", "s.json")).toThrow(/s\.json is not valid JSON/);
  });

  it("a schema-invalid state is a UserError naming the file and what is wrong, and mentions the backup", () => {
    const file = join(dir, "dev.json");
    writeFileSync(`${file}.backup`, "{}");
    const bad = { ...newState("dev"), serial: -1, resources: [{ address: "a" }] };
    let err: unknown;
    try {
      parseState(JSON.stringify(bad), file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const d = (err as UserError).diagnostics[0]!;
    expect(d.summary).toContain(file);
    expect(d.summary).toContain("/serial");
    expect(d.summary).toContain("/resources/0");
    expect(d.detail).toContain(`${file}.backup`);
  });

  it(
    "a serial that is not a safe whole number (too large to count " + "exactly, negative, fractional) is a UserError",
    () => {
      const file = join(dir, "dev.json");
      for (const serial of ["1e300", "9007199254740993", "9007199254740992", "-1", "1.5"]) {
        const text = serializeState(newState("dev")).replace('"serial": 0', `"serial": ${serial}`);
        expect(text).toContain(serial);
        expect(() => parseState(text, file), serial).toThrow(UserError);
        expect(() => parseState(text, file), serial).toThrow(/\/serial/);
      }
      const max = serializeState(newState("dev")).replace('"serial": 0', `"serial": ${Number.MAX_SAFE_INTEGER}`);
      expect(parseState(max, file).serial).toBe(Number.MAX_SAFE_INTEGER);
    },
  );

  it("a duplicated resource address is a UserError naming the address and where each copy is", () => {
    const file = join(dir, "dev.json");
    const s = { ...newState("dev"), resources: [resource("a"), resource("b"), { ...resource("a"), id: "another" }] };
    const text = serializeState(s);
    let err: unknown;
    try {
      parseState(text, file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const d = (err as UserError).diagnostics[0]!;
    expect(d.summary).toContain(file);
    expect(d.summary).toContain('resource address "a"');
    const lines = text.split("\n");
    const at = lines.map((l, i) => (l === "    {" ? i + 1 : 0)).filter((n) => n > 0);
    expect(at).toHaveLength(3);
    expect(d.summary).toContain(`resources[0] (line ${at[0]}, column 5)`);
    expect(d.summary).toContain(`resources[2] (line ${at[2]}, column 5)`);
    expect(d.summary).not.toContain("resources[1]");
    expect(d.line).toBe(at[2]);
    // On one line (as a database may give it back), the index still says which copy is which.
    expect(() => parseState(JSON.stringify(s), file)).toThrow(/resource address "a".*resources\[0\].*resources\[2\]/);
  });

  it("a state from a newer format version asks for an upgrade", () => {
    const s = { ...newState("dev"), version: 2 };
    expect(() => parseState(JSON.stringify(s), "s.json")).toThrow(/format version 2.*upgrade converge/);
  });
});
