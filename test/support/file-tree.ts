// What a command wrote: every file and directory under a root with its size and modification
// time, and the entries that differ between two such snapshots.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every file and directory under `root` with its size and modification time. */
export function tree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of readdirSync(root, { recursive: true }).map(String)) {
    const s = statSync(join(root, rel));
    out.set(rel, `${s.isDirectory() ? "dir" : s.size}:${s.mtimeMs}`);
  }
  return out;
}

/** Entries added, removed or changed between two trees, sorted. */
export function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).sort();
}
