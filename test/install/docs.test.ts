// The README and docs/ as a newcomer reads them: the README is short (under 12,000 characters),
// links every page of docs/, and no link of any page leaves the repository or is broken (a
// missing file, or an anchor no heading of the target has). The permissions docs/GOOGLE-CLOUD.md
// lists are exactly those of the calls converge makes.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { OBJECT_KINDS } from "../../src/gcp/object-kinds.js";
import { PROJECTS_GET } from "../../src/gcp/projects-api.js";
import { validate } from "../../src/schemas/index.js";
import { REPO } from "../e2e/helpers.js";
import { anchors, fences, links } from "./markdown.js";

const README = join(REPO, "README.md");
const DOCS = readdirSync(join(REPO, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => join(REPO, "docs", f));
const read = (file: string) => readFileSync(file, "utf8");

/** What is wrong with a link of `file`, if anything. */
function problem(file: string, target: string): string | undefined {
  const away = /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//") || /^www\./i.test(target);
  if (away) return "leaves the repository";
  const [path = "", anchor] = target.split("#", 2);
  const to = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
  if (path.startsWith("/") || relative(REPO, to).startsWith("..")) return "leaves the repository";
  if (!existsSync(to)) return "is broken: no such file";
  if (anchor !== undefined) {
    if (statSync(to).isDirectory() || !to.endsWith(".md")) return "has an anchor into a file that is not Markdown";
    if (!anchors(read(to)).has(anchor)) return `is broken: ${relative(REPO, to)} has no heading #${anchor}`;
  }
  return undefined;
}

describe("README and docs/", () => {
  it("the README is under 12,000 characters", () => {
    expect(read(README).length).toBeLessThan(12_000);
  });

  it("every page of docs/ is linked from the README", () => {
    const linked = new Set(links(read(README)).map((l) => resolve(REPO, l.target.split("#")[0]!)));
    expect(DOCS.filter((d) => !linked.has(d)).map((d) => relative(REPO, d))).toEqual([]);
  });

  it("no link leaves the repository, and none is broken", () => {
    const bad: string[] = [];
    for (const file of [README, ...DOCS]) {
      for (const l of links(read(file))) {
        const why = problem(file, l.target);
        if (why) bad.push(`${relative(REPO, file)}:${l.line}: ${l.target} ${why}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("the seed example of docs/EMULATOR.md is a valid seed", () => {
    const [seed] = fences(read(join(REPO, "docs", "EMULATOR.md"))).filter((f) => f.lang === "yaml");
    expect(validate("emulator-seed.schema.json", parse(seed!.body))).toEqual([]);
  });

  it("the custom roles grant exactly the permissions of converge's calls", () => {
    const roles = fences(read(join(REPO, "docs", "GOOGLE-CLOUD.md")))
      .filter((f) => f.lang === "yaml")
      .map((f) => parse(f.body) as { title: string; includedPermissions: string[] });
    const calls = Object.values(OBJECT_KINDS).flatMap((k) => k.methods.map((m) => m.permission));
    const all = [...calls, PROJECTS_GET.permission].sort();
    const byTitle = Object.fromEntries(roles.map((r) => [r.title, [...r.includedPermissions].sort()]));
    expect(byTitle["converge writer"]).toEqual(all);
    expect(byTitle["converge reader"]).toEqual(all.filter((p) => !p.endsWith(".setIamPolicy")));
  });
});
