// Program stacks through the CLI (dist/): the quickstart written as a TypeScript program
// (examples/typescript) plans exactly as the YAML quickstart (apart from source positions and
// what differs between any two runs), applies and destroys the same; a program outside the
// repository imports the package by name, `.mjs` stacks run, diagnostics point into the .ts file,
// an invoke whose argument waits on a resource output is shown as `<= read`, and a consumer's
// script drives a .ts stack with the Automation API.
import { execFile } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { State } from "../../src/generated/schemas.js";
import { REPO, expectExit, runCli, stackTraceLines, useTempDir } from "./helpers.js";

const YAML_DIR = join(REPO, "examples", "quickstart");
const TS_DIR = join(REPO, "examples", "typescript");
const ws = useTempDir("converge-program-");

/** What differs between two runs of the same plan: times, etags, digests, and where each stack is. */
const VOLATILE = new Set([
  "timestamp",
  "digest",
  "etag",
  "createTime",
  "updateTime",
  "file",
  "seed",
  "constant_value",
  "lineage",
]);

function normalized(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalized);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, VOLATILE.has(k) ? "<volatile>" : normalized(x)]));
  return v;
}

const run = (dir: string, file: string, state: string, ...args: string[]) =>
  runCli([...args, "-f", file, "--state", join(ws.dir, state, "state.json")], { cwd: dir, timeoutMs: 60_000 });

async function stateOf(which: string): Promise<State> {
  return JSON.parse(await readFile(join(ws.dir, which, "state.json"), "utf8")) as State;
}

describe("examples/typescript: the quickstart as a program", () => {
  it("plans exactly as the YAML quickstart (plan --json)", async () => {
    const [yaml, ts] = await Promise.all([
      run(YAML_DIR, "stack.yaml", "yaml", "plan", "--json"),
      run(TS_DIR, "stack.ts", "ts", "plan", "--json"),
    ]);
    expectExit(yaml, 0);
    expectExit(ts, 0);
    expect(ts.stderr).toBe("");
    const y = JSON.parse(yaml.stdout) as { resource_changes: unknown[] };
    const t = JSON.parse(ts.stdout) as { converge: { stack: { file: string } } };
    expect(t.converge.stack.file).toBe(join(TS_DIR, "stack.ts"));
    expect(y.resource_changes).toHaveLength(3);
    expect(normalized(t)).toEqual(normalized(y));
  });

  it("applies and destroys the same", async () => {
    // The same lines (concurrent steps may finish in another order; durations differ).
    const lines = (text: string) =>
      text
        .replace(/after \d+(\.\d+)?m?s/g, "after …")
        .replace(/etag( *)= "[^"]*"/g, "etag$1= …")
        .split("\n")
        .sort();
    const both = async (...args: string[]) => {
      const [y, t] = [await run(YAML_DIR, "stack.yaml", "yaml", ...args), await run(TS_DIR, "stack.ts", "ts", ...args)];
      expectExit(y, 0);
      expectExit(t, 0);
      expect(lines(t.stdout)).toEqual(lines(y.stdout));
      return t.stdout;
    };
    expect(await both("apply", "--auto-approve")).toContain(
      "Apply complete! Resources: 3 added, 0 changed, 0 destroyed.",
    );
    const [y, t] = [await stateOf("yaml"), await stateOf("ts")];
    const shape = (s: State) => ({
      outputs: s.outputs,
      resources: normalized(
        s.resources.map(({ address, type, id, inputs, outputs, dependencies }) => ({
          address,
          type,
          id,
          inputs,
          outputs,
          dependencies,
        })),
      ),
    });
    expect(shape(t)).toEqual(shape(y));
    expect(t.outputs).toMatchObject({ lakeEndpoint: "thrift://10.0.0.7:9083" });
    // The commands that read the state or only check the stack take a program too.
    const outputs = await run(TS_DIR, "stack.ts", "ts", "output", "--json");
    expectExit(outputs, 0);
    expect(JSON.parse(outputs.stdout)).toEqual(t.outputs);
    const valid = await runCli(["validate", "-f", "stack.ts"], { cwd: TS_DIR });
    expectExit(valid, 0);
    expect(valid.stdout).toBe("Success! The stack is valid (3 resources, 1 variable, 2 outputs).\n");
    expect(await both("destroy", "--auto-approve")).toMatch(/Destroy complete! Resources: 3 destroyed\./);
    expect((await stateOf("ts")).resources).toEqual([]);
    expect((await stateOf("yaml")).resources).toEqual([]);
  });
});

const SEED = join(YAML_DIR, "cloud.seed.yaml");

/** A directory outside the repository whose node_modules/converge-iam is the package, as `npm install`
 *  makes it. */
async function consumer(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(REPO, join(dir, "node_modules", "converge-iam"), "dir");
  for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
  return dir;
}

const HEAD =
  `stack.name = "consumer";\n  stack.provider = { project: "my-project", location: ` +
  `"us-central1", endpoint: "embedded", seed: ${JSON.stringify(SEED)} };`;

/** A source file of these lines. */
const lines = (...text: string[]) => `${text.join("\n")}\n`;

describe("a program outside the repository", () => {
  it("imports converge by name; a diagnostic points at the constructor call in the .ts file", async () => {
    const dir = await consumer("ts-consumer", {
      "stack.ts": lines(
        `import { RestorePlanIamMember, type StackContext } from "converge-iam";`,
        ``,
        `type Unused = { a: number };`,
        ``,
        `export default (stack: StackContext) => {`,
        `  ${HEAD}`,
        `  new RestorePlanIamMember("bad",`,
        `    { name: "nightly", role: "roles/gkebackup.viewer", member: "bob@example.com" });`,
        `};`,
      ),
    });
    const r = await runCli(["plan", "-f", "stack.ts"], { cwd: dir, timeoutMs: 60_000 });
    expectExit(r, 1);
    expect(r.stderr).toMatch(/^stack\.ts:8:3: Error: bad: member "bob@example\.com" has no type prefix/m);
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it("runs an .mjs stack, and shows an invoke waiting on a resource output as <= read", async () => {
    const dir = await consumer("mjs-consumer", {
      "stack.mjs": lines(
        `import { RestorePlanIamBinding, EndpointIamMember, getFederationOutput, interpolate } from "converge-iam";`,
        ``,
        `export default (stack) => {`,
        `  ${HEAD}`,
        `  const viewers = new RestorePlanIamBinding("viewers",`,
        `    { name: "nightly", role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] });`,
        `  const lake = getFederationOutput(`,
        `    { federationId: interpolate\`lake-\${viewers.etag}\`, location: "us-central1" }, { name: "lake" });`,
        `  new EndpointIamMember("invoker", { name: "churn", role: "roles/aiplatform.user",`,
        `    member: interpolate\`serviceAccount:\${lake.labels.owner}@my-project.iam.gserviceaccount.com\` });`,
        `};`,
      ),
    });
    const r = await runCli(["plan", "-f", "stack.mjs"], { cwd: dir, timeoutMs: 60_000 });
    expectExit(r, 0);
    expect(r.stdout).toContain("  # lake will be read during apply");
    expect(r.stdout).toContain(' <= data "cloudnative:metastore/v1alpha:getFederation" "lake" {');
    expect(r.stdout).toContain("      + member  = (known after apply)");
  });

  it("drives a .ts stack with the Automation API from a consumer's script", async () => {
    const dir = await consumer("automation", {
      "stack.ts": lines(
        `import { RestorePlanIamBinding, type StackContext } from "converge-iam";`,
        ``,
        `export default (stack: StackContext) => {`,
        `  ${HEAD}`,
        `  const v = new RestorePlanIamBinding("viewers",`,
        `    { name: "nightly", role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] });`,
        `  stack.export("id", v.id);`,
        `};`,
      ),
      "automate.mjs": lines(
        `import { Stack } from "converge-iam";`,
        `const s = await Stack.fromFile("stack.ts");`,
        `const events = [];`,
        `const plan = await s.plan({ onEvent: (e) => events.push(e.type) });`,
        `const applied = await s.apply(plan, { onEvent: (e) => events.push(e.type) });`,
        `const outputs = await s.outputs();`,
        `const destroyed = await s.destroy();`,
        `console.log(JSON.stringify({ name: s.name, changes: plan.resource_changes.length,`,
        `  failed: applied.failed.length, outputs, left: destroyed.state.resources.length,`,
        `  events: [...new Set(events)].sort() }));`,
      ),
    });
    const out = await new Promise<string>((res, rej) =>
      execFile(process.execPath, ["automate.mjs"], { cwd: dir }, (e, stdout, stderr) =>
        e ? rej(new Error(stderr)) : res(stdout),
      ),
    );
    expect(JSON.parse(out)).toEqual({
      name: "consumer",
      changes: 1,
      failed: 0,
      outputs: { id: "projects/my-project/locations/us-central1/restorePlans/nightly roles/gkebackup.viewer" },
      left: 0,
      events: ["policy-write", "refresh", "state-saved", "step"],
    });
  });

  it("reports an exception of the program at its line", async () => {
    const dir = await consumer("throws", {
      "stack.mjs": `export default (stack) => {\n  stack.name = "t";\n  throw new Error("boom");\n};\n`,
    });
    const r = await runCli(["plan", "-f", "stack.mjs"], { cwd: dir });
    expectExit(r, 1);
    expect(r.stderr).toBe("stack.mjs:3:9: Error: the program failed: boom\n");
  });
});
