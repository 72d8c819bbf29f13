// A directory outside the repository whose node_modules/converge-iam is the package (as `npm install`
// makes it), for the Pulumi program tests.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO } from "./helpers.js";

export async function packageDir(root: string, name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(REPO, join(dir, "node_modules", "converge-iam"), "dir");
  for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
  return dir;
}
