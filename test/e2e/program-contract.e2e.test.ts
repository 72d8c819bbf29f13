// Program stacks that break the CLI's contract on their own (found by a hostile tester): a default
// export that never settles, process.exit, writes to stdout, several mistakes at once, a thrown
// non-Error, a direct invoke under validate/graph, and work left behind once the default export
// has settled (timers, a callback calling the SDK late). Each is still an error of the CLI: a
// diagnostic (with its position where known), exit 1, and on --json only JSON on stdout.
import { mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { REPO, expectExit, runCli, stackTraceLines, stats, totalRequests, useTempDir } from "./helpers.js";

const ws = useTempDir("converge-program-contract-");
const SEED = join(REPO, "examples", "quickstart", "cloud.seed.yaml");
const IMPORTS = `import { EndpointIamMember, getFederation, type StackContext } from "converge-iam";\n`;
const PROVIDER =
  `stack.provider = { project: "my-project", location: "us-central1", ` +
  `endpoint: "embedded", seed: ${JSON.stringify(SEED)} };`;

/** A directory outside the repository whose node_modules/converge-iam is the package, with `stack.ts`. */
async function program(name: string, body: string, file = "stack.ts"): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(REPO, join(dir, "node_modules", "converge-iam"), "dir");
  await writeFile(join(dir, file), file.endsWith(".ts") ? IMPORTS + body : body);
  return dir;
}

const cli = (dir: string, ...args: string[]) =>
  runCli([...args, "-f", "stack.ts", ...(args[0] === "validate" ? [] : ["--state", join(dir, "state.json")])], {
    cwd: dir,
    timeoutMs: 60_000,
  });

/** plan --json's output when the stack does not load: errored, with the diagnostics. */
function failure(stdout: string): {
  errored: boolean;
  converge: { diagnostics: { summary: string; line?: number; column?: number }[] };
} {
  return JSON.parse(stdout) as ReturnType<typeof failure>;
}

describe("a default export that never settles", () => {
  it("is an error once nothing is left to run (exit 1, JSON on --json), not Node's exit 13", async () => {
    const dir = await program(
      "never",
      `export default (stack: StackContext) => {\n  stack.name = "never";\n  return new Promise<void>(() => {});\n};\n`,
    );
    const r = await cli(dir, "plan", "--json");
    expectExit(r, 1);
    const out = failure(r.stdout);
    expect(out.errored).toBe(true);
    expect(out.converge.diagnostics.map((d) => d.summary)).toEqual([
      "the program did not finish: its default export returned a promise that never settled",
    ]);
    expect(r.stderr).toMatch(
      /^stack\.ts: Error: the program did not finish: its default export returned a promise that never settled\n/,
    );
    const v = await cli(dir, "validate");
    expectExit(v, 1);
    expect(v.stderr).toContain("never settled");
  });

  it("also when the module's top-level await never settles", async () => {
    // (.mjs: a .ts file outside a "type": "module" package is CommonJS, where top-level await is a syntax error.)
    const dir = await program(
      "never-tla",
      `await new Promise(() => {});\nexport default (stack) => {\n  stack.name = "x";\n};\n`,
      "stack.mjs",
    );
    const r = await runCli(["validate", "--json", "-f", "stack.mjs"], { cwd: dir });
    expectExit(r, 1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      valid: false,
      errored: true,
      diagnostics: [{ summary: "the program did not finish loading: its top-level await never settled" }],
    });
  });
});

describe("a default export that never settles after a direct read", () => {
  it("is still told: the cloud opened for the read does not keep the process alive", async () => {
    const dir = await program(
      "never-after-read",
      `export default async (stack: StackContext) => {\n  stack.name = "n";\n  ${PROVIDER}\n  await ` +
        `getFederation({ federationId: "lake", location: "us-central1" });\n  await new Promise<void>(() => ` +
        `{});\n};\n`,
    );
    const r = await cli(dir, "plan", "--json");
    expectExit(r, 1);
    expect(failure(r.stdout).converge.diagnostics.map((d) => d.summary)).toEqual([
      "the program did not finish: its default export returned a promise that never settled",
    ]);
  });
});

describe("process.exit in a program", () => {
  it("is reported at its call site, exit 1, not taken as success", async () => {
    const dir = await program(
      "exit",
      `export default (stack: StackContext) => {\n  stack.name = "exiter";\n  process.exit(0);\n};\n`,
    );
    for (const args of [["validate"], ["plan", "--detailed-exitcode"]]) {
      const r = await cli(dir, ...args);
      expectExit(r, 1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        "stack.ts:4:11: Error: the program called process.exit(0)\n  converge ends " +
          "the run itself: throw an Error to stop the program.\n",
      );
    }
  });

  it("also from a timer while the program's promise is pending, and while its module loads", async () => {
    const timer = await program(
      "exit-timer",
      `export default (stack: StackContext) => {\n  stack.name = "exiter";\n  setTimeout(() => ` +
        `process.exit(3), 10);\n  return new Promise<void>(() => {});\n};\n`,
    );
    const r = await cli(timer, "plan", "--json");
    expectExit(r, 1);
    expect(failure(r.stdout).converge.diagnostics).toMatchObject([
      { summary: "the program called process.exit(3)", line: 4, column: 28 },
    ]);
    const loading = await program(
      "exit-load",
      `process.exit(0);\nexport default (stack: StackContext) => {\n  stack.name = "x";\n};\n`,
    );
    const v = await cli(loading, "validate");
    expectExit(v, 1);
    expect(v.stderr).toMatch(/^stack\.ts:2:9: Error: the program called process\.exit\(0\)\n/);
  });
});

describe("a program writing to stdout", () => {
  it("goes to stderr: stdout holds only converge's JSON", async () => {
    const dir = await program(
      "stdout",
      `console.log("PROGRAM PRINTS TO STDOUT");\nexport default (stack: StackContext) => {\n  stack.name = ` +
        `"stdoutp";\n  ${PROVIDER}\n  console.log('{"not": "the plan"}');\n  process.stdout.write("raw ` +
        `write\\n");\n  new EndpointIamMember("a", { name: "churn", role: "roles/aiplatform.viewer", member: ` +
        `"user:a@example.com" });\n};\n`,
    );
    const plan = await cli(dir, "plan", "--json");
    expectExit(plan, 0);
    expect((JSON.parse(plan.stdout) as { resource_changes: unknown[] }).resource_changes).toHaveLength(1);
    expect(plan.stderr).toBe('PROGRAM PRINTS TO STDOUT\n{"not": "the plan"}\nraw write\n');
    const valid = await cli(dir, "validate", "--json");
    expectExit(valid, 0);
    expect(JSON.parse(valid.stdout)).toMatchObject({ valid: true });
  });
});

describe("several mistakes in a program", () => {
  it("are all reported, as in a YAML stack, not only the duplicate name", async () => {
    const dir = await program(
      "dup",
      `export default (stack: StackContext) => {\n  stack.name = "dup";\n  ${PROVIDER}\n` +
        `  new EndpointIamMember("a", { name: "churn", role: ` +
        `"roles/aiplatform.viewer", member: "user:a@example.com" });\n` +
        `  new EndpointIamMember("a", { name: "churn", role: ` +
        `"roles/aiplatform.viewer", member: "user:b@example.com" });\n` +
        `  new EndpointIamMember("b", { name: "churn", role: "roles/aiplatform.viewer", member: "bogus" });\n` +
        `  new EndpointIamMember("bad name!", { name: "churn", role: ` +
        `"roles/aiplatform.viewer", member: "user:c@example.com" });\n};\n`,
    );
    const r = await cli(dir, "validate", "--json");
    expectExit(r, 1);
    const out = JSON.parse(r.stdout) as {
      error_count: number;
      diagnostics: { summary: string; range?: { start: { line: number } } }[];
    };
    const lines = out.diagnostics.map((d) => [d.range?.start.line, d.summary]);
    expect(lines).toEqual([
      [6, expect.stringMatching(/^duplicate name "a"/)],
      [7, expect.stringMatching(/bogus/)],
      [8, expect.stringMatching(/bad name!/)],
    ]);
  });
});

describe("a program throwing a value that is not an Error", () => {
  it("shows the value, bounded and readable", async () => {
    const dir = await program(
      "throw-object",
      `export default async (stack: StackContext) => {\n  stack.name = "t";\n  await Promise.resolve();\n  ` +
        `throw { weird: "object", nested: { deep: { deeper: { deepest: 1 } } }, long: "x".repeat(5000), esc: ` +
        `"\\u001b[31m" };\n};\n`,
    );
    const r = await cli(dir, "plan");
    expectExit(r, 1);
    const first = r.stderr.split("\n")[0]!;
    expect(first).toMatch(
      new RegExp(
        String.raw`^stack\.ts: Error: the program failed: it threw \{ weird: 'object', nested: \{ deep: \{ de` +
          String.raw`eper: \[Object\] \} \}, long: 'x+`,
      ),
    );
    expect(first.length).toBeLessThan(400);
    expect(r.stderr).not.toContain("\u001b");
    expect(r.stderr).toContain("throw an Error");
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it("shows a thrown string as it is", async () => {
    const dir = await program(
      "throw-string",
      `export default (stack: StackContext) => {\n  stack.name = "t";\n  throw "plain words";\n};\n`,
    );
    const r = await cli(dir, "plan");
    expectExit(r, 1);
    expect(r.stderr.split("\n")[0]).toBe("stack.ts: Error: the program failed: it threw plain words");
  });
});

describe("a direct invoke under validate and graph", () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ seedFile: SEED });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("is an error at its call, with no call to the cloud; plan still reads it", async () => {
    const dir = await program(
      "direct",
      `export default async (stack: StackContext) => {\n  stack.name = "direct";\n  ` +
        `stack.provider = { project: "my-project", location: "us-central1" };\n` +
        `  const lake = await getFederation({ federationId: "lake", location: "us-central1" });\n` +
        `  new EndpointIamMember("a", { name: "churn", role: "roles/aiplatform.viewer", member: ` +
        `\`serviceAccount:\${lake.labels.owner}@my-project.iam.gserviceaccount.com\` });\n};\n`,
    );
    const run = (...args: string[]) =>
      runCli([...args, "-f", "stack.ts", ...(args[0] === "plan" ? ["--state", join(dir, "state.json")] : [])], {
        cwd: dir,
        emulator: emu,
        timeoutMs: 60_000,
      });
    for (const command of ["validate", "graph"]) {
      const before = totalRequests(await stats(emu));
      const r = await run(command);
      expectExit(r, 1);
      expect(r.stderr).toBe(
        `stack.ts:5:22: Error: getFederation reads the cloud at once; ${command} does not call the ` +
          `cloud\n  Use getFederationOutput (read at plan time), or run plan.\n`,
      );
      expect(totalRequests(await stats(emu))).toBe(before);
    }
    const before = totalRequests(await stats(emu));
    const plan = await run("plan", "--json");
    expectExit(plan, 0);
    expect(totalRequests(await stats(emu))).toBeGreaterThan(before);
    // A --var that cannot be read fails the run: reported with the program's errors, and no call.
    const beforeBad = totalRequests(await stats(emu));
    const bad = await run("plan", "--var", "nope");
    expectExit(bad, 1);
    expect(bad.stderr).toContain('Error: --var "nope" is not name=value');
    expect(bad.stderr).toContain(
      "stack.ts:5:22: Error: getFederation reads the cloud at once; it does " +
        "not while the --var and --var-file errors stand",
    );
    expect(totalRequests(await stats(emu))).toBe(beforeBad);
    // A --var the program has not read before the call may be an unknown input: no call.
    const unknown = await run("plan", "--var", "team=sre");
    expectExit(unknown, 1);
    expect(unknown.stderr).toContain(
      "stack.ts:5:22: Error: getFederation reads the cloud at once; it does not " +
        "while --var team is given and not read by the program",
    );
    expect(totalRequests(await stats(emu))).toBe(beforeBad);
  });
});

describe("work a program leaves behind once its default export has settled", { timeout: 60_000 }, () => {
  const MEMBER_A =
    `new EndpointIamMember("a", { name: "churn", role: ` +
    `"roles/aiplatform.viewer", member: "user:a@example.com" });`;

  it(
    "timers (setInterval, a long setTimeout, setImmediate, at load too) are " +
      "cancelled: apply and plan end, their callbacks never run",
    async () => {
      const dir = await program(
        "timers",
        `import { writeFileSync } from "node:fs";\nsetInterval(() => writeFileSync("load-tick", "x"), 300);\n` +
          `export default async (stack: StackContext) => {\n  stack.name = "timers";\n  ${PROVIDER}\n  ${MEMBER_A}\n` +
          `  await new Promise((r) => setTimeout(r, 5));\n` +
          `  setInterval(() => writeFileSync("tick", "x"), 50);\n  setTimeout(() => writeFileSync("late", ` +
          `"x"), 600_000);\n  setImmediate(() => writeFileSync("immediate", "x"));\n` +
          `  Promise.resolve().then(() => setTimeout(() => writeFileSync("chained", "x"), 100));\n};\n`,
      );
      const started = Date.now();
      const apply = await runCli(["apply", "--auto-approve", "-f", "stack.ts", "--state", join(dir, "state.json")], {
        cwd: dir,
        timeoutMs: 30_000,
      });
      expectExit(apply, 0);
      expect(Date.now() - started).toBeLessThan(25_000);
      const plan = await cli(dir, "plan", "--json");
      expectExit(plan, 0);
      await new Promise((r) => setTimeout(r, 400)); // longer than any interval: a leftover process would have ticked
      expect(
        (await readdir(dir)).filter((f) => ["load-tick", "tick", "late", "immediate", "chained"].includes(f)),
      ).toEqual([]);
    },
  );

  it(
    "a late SDK call (from a callback that outlives the program) is refused with a " +
      "warning at its call; the stack is what the export declared",
    async () => {
      const dir = await program(
        "late",
        `import { execFile } from "node:child_process";\nimport { writeFileSync } from "node:fs";\n` +
          `export default (stack: StackContext) => {\n  stack.name = "late";\n  ${PROVIDER}\n  ${MEMBER_A}\n` +
          `  execFile(process.execPath, ["-e", ""], () => {\n` +
          `    new EndpointIamMember("late", { name: "churn", role: ` +
          `"roles/aiplatform.user", member: "user:late@example.com" });\n` +
          `    void getFederation({ federationId: "lake", location: "us-central1" }).then(() => ` +
          `writeFileSync("read", "x"), () => writeFileSync("read-failed", "x"));\n` +
          `  });\n};\n`,
      );
      const apply = await runCli(["apply", "--auto-approve", "-f", "stack.ts", "--state", join(dir, "state.json")], {
        cwd: dir,
        timeoutMs: 30_000,
      });
      expectExit(apply, 0);
      expect(apply.stderr).toContain(
        'stack.ts:9:5: Warning: new EndpointIamMember("late") was called after the program finished: ' +
          "refused\n  The stack is what the default export declares by the time it settles (returns, or its " +
          "promise resolves);",
      );
      expect(apply.stderr).toContain(
        "stack.ts:10:10: Warning: getFederation was called after the program finished: refused",
      );
      expect(stackTraceLines(apply.stderr)).toEqual([]);
      const state = JSON.parse(
        await import("node:fs/promises").then((fs) => fs.readFile(join(dir, "state.json"), "utf8")),
      ) as { resources: { address: string }[] };
      expect(state.resources.map((r) => r.address)).toEqual(["a"]);
      expect((await readdir(dir)).filter((f) => f.startsWith("read"))).toEqual([]);
    },
  );

  it(
    "a server, a socket and a child process left open: the command ends " +
      "(exit 0) saying so, instead of waiting for them",
    async () => {
      const dir = await program(
        "handles",
        `import { createServer, connect } from "node:net";\nimport { spawn } from "node:child_process";\n` +
          `export default async (stack: StackContext) => {\n  stack.name = "handles";\n  ${PROVIDER}\n  ${MEMBER_A}\n` +
          `  const server = createServer((s) => s.pause());\n  await new ` +
          `Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));\n` +
          `  connect((server.address() as { port: number }).port, "127.0.0.1");\n` +
          `  spawn(process.execPath, ["-e", "setTimeout(() => {}, 20000)"], { stdio: "ignore" });\n};\n`,
      );
      const started = Date.now();
      const apply = await runCli(["apply", "--auto-approve", "-f", "stack.ts", "--state", join(dir, "state.json")], {
        cwd: dir,
        timeoutMs: 30_000,
      });
      expectExit(apply, 0);
      expect(Date.now() - started).toBeLessThan(19_000);
      expect(apply.stderr).toMatch(
        new RegExp(
          String.raw`converge: the program stack left (1 server, 1 socket and 1 child process|1 socket, 1 serve` +
            String.raw`r and 1 child process|[^\n]*) open; the command is done and converge does not wait for the` +
            String.raw`m`,
        ),
      );
      expect(apply.stderr).toMatch(/1 child process/);
      expect(apply.stderr).toMatch(/1 server/);
    },
  );
});
