// As root, the test PostgreSQL server runs as the "postgres" user (PostgreSQL refuses root), which
// must reach its binaries inside this checkout's node_modules. A checkout in a private directory
// (`mktemp -d` makes it 0700) is out of its reach: initdb's spawn failed with EACCES. The
// directories on the way get search permission for others (o+x: enter, not list) while the server
// runs; `restore` puts every mode back.
import { chmod, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/** Gives `path` and each directory above it search permission for others; returns the undo. */
export async function grantSearch(path: string): Promise<() => Promise<void>> {
  const changed: [string, number][] = [];
  for (let d = resolve(path); ; d = dirname(d)) {
    const mode = (await stat(d)).mode & 0o7777;
    if (!(mode & 0o001)) {
      await chmod(d, mode | 0o001);
      changed.push([d, mode]);
    }
    if (dirname(d) === d) break;
  }
  return async () => {
    for (const [d, mode] of changed.reverse()) await chmod(d, mode).catch(() => undefined);
  };
}
