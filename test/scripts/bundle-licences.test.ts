// The CLI's bundle holds the code of a few small packages (scripts/bundle-cli.mjs, JOINED): their
// licence texts must travel with it. Every package the bundle's metafile names has its name,
// version, licence and licence text in dist/bundle/THIRD-PARTY-LICENSES.txt.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLE = join(REPO, "dist", "bundle");

it("lists every package whose code is in the bundle, with its licence text", () => {
  const { inputs } = JSON.parse(readFileSync(join(BUNDLE, "metafile.json"), "utf8")) as {
    inputs: Record<string, unknown>;
  };
  const dirs = new Set<string>();
  for (const input of Object.keys(inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(m[1]!);
  }
  // diff is joined: the attribute diff of every plan uses it.
  expect([...dirs]).toContain("node_modules/diff");
  const notices = readFileSync(join(BUNDLE, "THIRD-PARTY-LICENSES.txt"), "utf8");
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(REPO, dir, "package.json"), "utf8")) as Record<string, string>;
    expect(notices, dir).toContain(`${pkg.name} ${pkg.version} (${pkg.license})`);
    const file = readdirSync(join(REPO, dir)).find((f) => /^licen[cs]e(\.(md|txt))?$/i.test(f))!;
    expect(notices, dir).toContain(readFileSync(join(REPO, dir, file), "utf8").trim());
  }
});
