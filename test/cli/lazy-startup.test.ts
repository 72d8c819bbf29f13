// Lazy start-up (issue 20): what the CLI loads is what the command uses. `--version` loads none
// of the heavy libraries; `validate` of a YAML stack without conditions loads no live view (ink,
// react), no Google auth, no PostgreSQL client and no TypeScript loader. Structural, not timed:
// the process runs under a hook that records every module it loads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const RECORDER = fileURLToPath(new URL("../support/record-loads.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "converge-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STACK = `name: lazy
provider:
  project: p1
  location: us-central1
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: rp-1
      role: roles/viewer
      members: [group:team@example.com]
`;

/** The packages (by their node_modules directory) a `node bin/converge.js ...args` run loads. */
function packagesLoaded(
  name: string,
  args: string[],
): { status: number | null; stdout: string; packages: Set<string>; files: string[] } {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, "");
  const env: NodeJS.ProcessEnv = { ...process.env, CONVERGE_TEST_LOAD_LOG: log, NO_COLOR: "1" };
  delete env.CLOUDNATIVE_EMULATOR_HOST;
  const r = spawnSync(process.execPath, ["--import", RECORDER, join(REPO, "bin", "converge.js"), ...args], {
    cwd: dir,
    env,
    encoding: "utf8",
  });
  if (r.status !== 0) process.stderr.write(`converge ${args.join(" ")} exited ${r.status}:\n${r.stderr}\n`);
  const packages = new Set<string>();
  const files = readFileSync(log, "utf8")
    .split("\n")
    .map((l) => l.replaceAll("\\", "/"));
  for (const line of files) {
    const m = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(line.replaceAll("%40", "@"));
    if (m) packages.add(m[1]!.replace("\\", "/"));
  }
  return { status: r.status, stdout: r.stdout, packages, files: files.flatMap(modulesOf) };
}

/** The bundle's own map of which compiled modules each of its files holds (scripts/bundle-cli.mjs). */
const BUNDLE = JSON.parse(readFileSync(join(REPO, "dist", "bundle", "metafile.json"), "utf8")) as {
  outputs: Record<string, { inputs: Record<string, unknown> }>;
};

/** A loaded file as the modules it holds: a file of the bundled CLI stands for the dist/ modules bundled in it. */
function modulesOf(loaded: string): string[] {
  const m = /\/(dist\/bundle\/[^/]+\.js)$/.exec(loaded);
  if (!m) return [loaded];
  const out = BUNDLE.outputs[m[1]!];
  if (!out) throw new Error(`${loaded} is not in the bundle's metafile: rebuild`);
  return Object.keys(out.inputs).map((f) => `${REPO.replaceAll("\\", "/")}${f}`);
}

describe("lazy start-up", () => {
  it("--version loads no command library", () => {
    const r = packagesLoaded("version", ["--version"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^converge \S+\nprovider schema cloudnative /);
    for (const p of ["ink", "react", "@inkjs/ui", "@bufbuild/cel", "google-auth-library", "pg", "tsx", "ajv", "yaml"])
      expect(r.packages, p).not.toContain(p);
  });

  it(
    "validate of a YAML stack without conditions loads no live view, " +
      "auth, PostgreSQL client, CEL or TypeScript loader",
    () => {
      writeFileSync(join(dir, "stack.yaml"), STACK);
      const r = packagesLoaded("validate", ["validate", "-f", "stack.yaml"]);
      expect(r.stdout).toContain("Success! The stack is valid (1 resource,");
      expect(r.status).toBe(0);
      // The recorder works: validate loads commander and ajv's runtime (for the built validators).
      expect(r.packages).toContain("commander");
      expect(r.packages).toContain("ajv");
      for (const p of ["ink", "react", "@inkjs/ui", "@bufbuild/cel", "google-auth-library", "pg", "tsx"])
        expect(r.packages, p).not.toContain(p);
      // The bundled CLI ran, and the recorder sees the modules in what it loaded.
      expect(r.files.some((f) => f.endsWith("/dist/cli/commands/validate.js"))).toBe(true);
      expect(r.files.some((f) => f.endsWith("/dist/config/load.js"))).toBe(true);
      // The validators built with the package (dist/schemas/precompiled.cjs) are used: ajv's compiler is not loaded.
      expect(r.files.filter((f) => /node_modules\/ajv\/dist\/compile\//.test(f))).toEqual([]);
      // Nor the engine: validate reads no state and calls no cloud.
      expect(r.files.some((f) => f.endsWith("/dist/engine/session.js"))).toBe(false);
    },
  );

  // The CLI only parses CEL (to check a condition's expression): @bufbuild/cel's index also loads
  // its type checker, evaluator, standard library, re2 and the protobuf runtime with its
  // descriptors, about 100 ms of every command on a stack with a condition (a fifth of the
  // quickstart's plan). Only the parser's own files are loaded now.
  it("validate of a stack with a condition loads @bufbuild/cel's parser and nothing else of it", () => {
    const withCondition = STACK.replace("roles/viewer", "roles/gkebackup.viewer").replace(
      "      members: [group:team@example.com]\n",
      "      members: [group:team@example.com]\n      condition:\n        title: until-2027\n        " +
        'expression: request.time < timestamp("2027-01-01T00:00:00Z")\n',
    );
    writeFileSync(join(dir, "conditional.yaml"), withCondition);
    const r = packagesLoaded("validate-condition", ["validate", "-f", "conditional.yaml"]);
    expect(r.stdout).toContain("Success! The stack is valid (1 resource,");
    expect(r.status).toBe(0);
    const cel = r.files
      .filter((f) => f.includes("/node_modules/@bufbuild/"))
      .map((f) => f.replace(/^.*\/node_modules\//, ""));
    expect([...new Set(cel)].sort()).toEqual([
      "@bufbuild/cel/dist/cjs/builder.js",
      "@bufbuild/cel/dist/cjs/logic-manager.js",
      "@bufbuild/cel/dist/cjs/parse.js",
      "@bufbuild/cel/dist/cjs/parser.js",
    ]);
  });
});
