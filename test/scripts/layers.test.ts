// Every import in src/ points down. A room is a folder right under src/ (or a file there); the
// rooms stand on floors, and a file may import its own room or a room on a lower floor, never one
// on its own floor or above. No files import each other in a loop, inside a room or across rooms.
// The emulator's independence (test/emulator/independence.test.ts) is a stricter rule on one room.
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importCircles, importsOf, ROOT, SRC, sourceFiles } from "./imports.js";

/** The floors, top first: the shell, the core, the contracts the core and the shell share, the ground. */
export const FLOORS: readonly (readonly string[])[] = [
  ["index.ts", "automation.ts"],
  ["pulumi.ts", "google-native.ts"],
  ["cli/"],
  ["automation/"],
  ["engine/"],
  ["sdk/"],
  ["connect/"],
  ["apply/"],
  ["plan/", "migrate/"],
  ["guardrails/"],
  ["config/", "state/"],
  ["claims/", "language/"],
  ["drivers/"],
  ["contracts/", "cloud/", "emulator/"],
  ["iam/", "fs/", "graph/", "yaml/"],
  ["diagnostics/"],
  ["base/", "gcp/", "schemas/", "generated/"],
];

/** The room a source path (relative to src/) belongs to. */
export function roomOf(path: string): string {
  const slash = path.indexOf("/");
  return slash < 0 ? path : path.slice(0, slash + 1);
}

const floorOf = (room: string): number => FLOORS.findIndex((floor) => floor.includes(room));

/** `from → to` for each import that does not point to the importer's room or a lower floor. */
export function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const room = roomOf(from);
    for (const to of targets) {
      if (roomOf(to) !== room && floorOf(roomOf(to)) <= floorOf(room)) out.push(`${from} → ${to}`);
    }
  }
  return out.sort();
}

/** src/'s import graph, paths relative to src/. */
function srcGraph(): Map<string, string[]> {
  const rel = (file: string): string => relative(SRC, file);
  return new Map(sourceFiles(SRC).map((file) => [rel(file), importsOf(file).map(rel)]));
}

describe("the layers of src/", () => {
  const graph = srcGraph();

  it("places every file of src/ in a room on a floor", () => {
    const unplaced = [...new Set([...graph.keys()].map(roomOf))].filter((room) => floorOf(room) < 0);
    expect(unplaced).toEqual([]);
  });

  it("has no import that runs up a floor or across one", () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it("has no files that import each other in a loop", () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it("sees an upward import and a circle (the checks are not blind)", () => {
    const made = new Map([
      ["plan/planner.ts", ["contracts/events.ts", "engine/session.ts"]],
      ["engine/session.ts", ["plan/planner.ts"]],
      ["contracts/events.ts", []],
    ]);
    expect(upwardImports(made)).toEqual(["plan/planner.ts → engine/session.ts"]);
    expect(importCircles(made)).toEqual([["engine/session.ts", "plan/planner.ts"]]);
    expect(relative(ROOT, SRC)).toBe("src");
  });
});
