// Issue 37, item 4: program stacks that attack the process they run in, through the real CLI.
// - a program that spins (at top level, in its default export, sync or after an await) still
//   stops on Ctrl-C and SIGTERM: exit 130 within 2 s of the signal;
// - an un-awaited rejected promise (at top level, in the export, a tick after it returned) is the
//   program's failure at the reject site: exit 1, one JSON document on --json, no Node trace;
// - a throwing getter on the stack context is the program's failure, not an internal error;
// - a 50 MB error message is cut, and the diagnostic says how long it was.
import { writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, stackTraceLines, startCli, useTempDir, type CliResult } from "./helpers.js";

const ws = useTempDir("converge-hostile-programs-");

async function program(name: string, body: string, file = "stack.mjs"): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), body);
  return dir;
}

const args = (command: string[], dir: string, file = "stack.mjs") => [
  ...command,
  "-f",
  file,
  ...(command[0] === "plan" || command[0] === "apply" ? ["--state", join(dir, "state.json")] : []),
];

/** Says it spins (the test signals once it reads that), then spins. */
const SPIN = `process.stderr.write("SPINNING\\n");\nwhile (true) {}\n`;

const SPINS: [string, string][] = [
  ["at top level", `${SPIN}export default (stack) => {\n  stack.name = "s";\n};\n`],
  ["in the default export", `export default (stack) => {\n  stack.name = "s";\n${SPIN}};\n`],
  [
    "in the default export after an await",
    `export default async (stack) => {\n  stack.name = "s";\n` +
      `  await new Promise((r) => setTimeout(r, 20));\n${SPIN}};\n`,
  ],
];

describe("a program that spins stops on a signal: exit 130 within 2 s", () => {
  for (const [where, body] of SPINS) {
    for (const command of [["validate"], ["graph"], ["plan"], ["plan", "--json"], ["apply", "--auto-approve"]]) {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        it(`${where}: ${command.join(" ")}, ${signal}`, async () => {
          const tag = `spin-${SPINS.findIndex((s) => s[1] === body)}-${command.join("")}-${signal}`;
          const dir = await program(tag, body);
          const cli = startCli(args(command, dir), { cwd: dir, timeoutMs: 60_000 });
          await cli.waitFor("SPINNING");
          const sent = Date.now();
          cli.child.kill(signal);
          const r = await cli.doneWithin(10_000);
          expect(r.signal).toBeNull();
          expect(r.code).toBe(130);
          expect(r.endedAt - sent).toBeLessThan(2_000); // the issue's own bound
          expect(r.stderr).not.toContain("internal error");
        }, 30_000);
      }
    }
  }

  it("a .ts program spinning in its default export: SIGINT, exit 130 within 2 s", async () => {
    const body = `export default (stack: { name: string }) => {\n  stack.name = "s";\n${SPIN}};\n`;
    const dir = await program("spin-ts", body, "stack.ts");
    const cli = startCli(args(["validate"], dir, "stack.ts"), { cwd: dir, timeoutMs: 60_000 });
    await cli.waitFor("SPINNING");
    const sent = Date.now();
    cli.child.kill("SIGINT");
    const r = await cli.doneWithin(10_000);
    expect(r.code).toBe(130);
    expect(r.endedAt - sent).toBeLessThan(2_000);
  }, 30_000);
});

const COMMANDS = [
  ["validate"],
  ["validate", "--json"],
  ["graph"],
  ["plan"],
  ["plan", "--json"],
  ["apply", "--auto-approve"],
  ["apply", "--auto-approve", "--json"],
];

/** The run failed as the program's failure: exit 1, no trace, no internal error; with --json one
 *  JSON document naming it (apply: JSON lines); else the diagnostic line starts with `at`. */
function expectProgramFailure(r: CliResult, command: string[], summary: string, at?: string): void {
  const all = `--- stdout\n${r.stdout.slice(0, 2000)}\n--- stderr\n${r.stderr.slice(0, 2000)}`;
  expect(r.code, all).toBe(1);
  expect(r.stderr, all).not.toContain("internal error");
  expect(stackTraceLines(r.stderr), all).toEqual([]);
  if (command.includes("--json")) {
    // apply --json streams JSON lines; validate and plan print one document.
    const lines = command[0] === "apply" ? r.stdout.trim().split("\n") : [r.stdout];
    const docs = lines.map((l) => JSON.parse(l) as unknown);
    expect(JSON.stringify(docs), all).toContain(summary);
  } else {
    const line = r.stderr.split("\n").find((l) => l.includes(`Error: ${summary}`));
    expect(line, all).toBeDefined();
    if (at) expect(line!.startsWith(at), all).toBe(true);
  }
}

const REJECTIONS: [string, string, string][] = [
  [
    "at top level",
    `Promise.reject(new Error("rejected at load"));\nexport default (stack) => {\n  stack.name = "r";\n};\n`,
    "stack.mjs:1:16: Error: ",
  ],
  [
    "in the default export",
    `export default (stack) => {\n  stack.name = "r";\n  Promise.reject(new Error("rejected in the export"));\n};\n`,
    "stack.mjs:3:18: Error: ",
  ],
  [
    "a tick after the export returned",
    `export default (stack) => {\n  stack.name = "r";\n` +
      `  process.nextTick(() => Promise.reject(new Error("rejected a tick later")));\n};\n`,
    "stack.mjs:3:41: Error: ",
  ],
];

describe("an un-awaited rejected promise is the program's failure", () => {
  for (const [where, body, at] of REJECTIONS) {
    for (const command of COMMANDS) {
      it(`${where}: ${command.join(" ")}`, async () => {
        const tag = `reject-${REJECTIONS.findIndex((x) => x[1] === body)}-${command.join("")}`;
        const dir = await program(tag, body);
        const r = await runCli(args(command, dir), { cwd: dir, timeoutMs: 60_000 });
        expectProgramFailure(r, command, `the program failed: ${/rejected[^"]*/.exec(body)![0]}`, at);
      }, 60_000);
    }
  }
});

const THROW = (message: string) => `throw new Error(${JSON.stringify(message)});`;

const GETTERS: [string, string, string][] = [
  [
    "stack.provider",
    `  Object.defineProperty(stack, "provider", { get() { ${THROW("no provider")} } });\n`,
    "no provider",
  ],
  ["stack.name", `  Object.defineProperty(stack, "name", { get() { ${THROW("no name")} } });\n`, "no name"],
  ["a field of stack.provider", `  stack.provider = { get project() { ${THROW("no project")} } };\n`, "no project"],
  [
    "stack.backend",
    `  Object.defineProperty(stack, "backend", { enumerable: true, get() { ${THROW("no backend")} } });\n`,
    "no backend",
  ],
];

describe("a throwing getter on the stack context is the program's failure", () => {
  for (const [what, line, message] of GETTERS) {
    for (const command of [["validate"], ["validate", "--json"], ["graph"], ["plan", "--json"]]) {
      it(`${what}: ${command.join(" ")}`, async () => {
        const tag = `getter-${GETTERS.findIndex((g) => g[0] === what)}-${command.join("")}`;
        const dir = await program(tag, `export default (stack) => {\n  stack.name = "g";\n${line}};\n`);
        const r = await runCli(args(command, dir), { cwd: dir, timeoutMs: 60_000 });
        expectProgramFailure(r, command, `the program failed: ${message}`, "stack.mjs:3:");
      }, 60_000);
    }
  }
});

describe("a 50 MB error message is cut", () => {
  for (const command of [["validate"], ["validate", "--json"], ["plan"], ["plan", "--json"]]) {
    it(`${command.join(" ")}: the diagnostic says its full length, and the output stays small`, async () => {
      const body = `export default (stack) => {\n  stack.name = "h";\n  throw new Error("x".repeat(52428800));\n};\n`;
      const dir = await program(`huge-${command.join("")}`, body);
      const r = await runCli(args(command, dir), { cwd: dir, timeoutMs: 60_000 });
      expectProgramFailure(r, command, "the program failed: xxxx");
      expect(r.stdout.length + r.stderr.length).toBeLessThan(100_000);
      expect(r.stdout + r.stderr).toContain("(52428800 characters in all)");
      const line = /^[^\n]*stack\.mjs:3:9: Error: the program failed: x+… \(52428800 characters in all\)$/m;
      if (!command.includes("--json")) expect(r.stderr).toMatch(line);
    }, 60_000);
  }
});
