// Secrets (issue 8, item 5): with a token configured, no token appears in state, saved plans,
// --json output or logs (also when a server echoes it back in its errors); state and plan files
// are mode 0600 whatever the umask; the emulator binds 127.0.0.1 by default.
import { createServer, type Server } from "node:http";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import {
  expectExit,
  PROJECT,
  recordFigures,
  runCli,
  seedWorld,
  setFaults,
  sleep,
  startCli,
  startWorld,
  stackYaml,
  tempDir,
  type CliResult,
} from "./helpers.js";

const figures = {
  commandsScanned: 0,
  bytesScanned: 0,
  filesScanned: 0,
  tokenOccurrences: 0,
  filesModeChecked: 0,
  filesNot0600: 0,
};
afterAll(() => figures.commandsScanned && recordFigures("secrets", { ...figures, losses: 0 }));

/** Looks like a Google OAuth access token, so any redaction by shape would also apply. */
const TOKEN = `ya29.a0Secret${randomBytes(12).toString("hex")}`;
/** A token with no recognisable shape: only redaction by value catches it. */
const PLAIN = `plain-${randomBytes(12).toString("hex")}`;
const VIEWER = `viewer-${randomBytes(8).toString("hex")}`;
/** Pieces long enough to identify the token if it were printed truncated or split. */
const needles = (t: string) => [t, t.slice(0, 24), t.slice(-16)];

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => ({ dir, remove } = await tempDir()));
afterEach(() => remove());

function scan(what: string, text: string, tokens: string[]): void {
  figures.bytesScanned += text.length;
  for (const t of tokens) {
    for (const n of needles(t)) {
      if (text.includes(n)) {
        figures.tokenOccurrences++;
        throw new Error(
          `a token (${n.slice(0, 8)}…) appears in ${what}:\n` +
            `${text.slice(Math.max(0, text.indexOf(n) - 300), text.indexOf(n) + 100)}`,
        );
      }
    }
  }
}

function scanRun(what: string, r: CliResult, tokens: string[]): void {
  figures.commandsScanned++;
  scan(`${what} stdout`, r.stdout, tokens);
  scan(`${what} stderr`, r.stderr, tokens);
}

/** Every file under `root` except the inputs the user wrote (stack and seed). */
function scanFiles(root: string, tokens: string[]): string[] {
  const seen: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (!/^(stack\.yaml|seed\.yaml|emulator\.(out|err))$/.test(name)) {
        figures.filesScanned++;
        scan(p, readFileSync(p, "latin1"), tokens);
        seen.push(p);
      }
    }
  };
  walk(root);
  return seen;
}

function expectMode0600(file: string): void {
  figures.filesModeChecked++;
  const mode = statSync(file).mode & 0o777;
  if (mode !== 0o600) figures.filesNot0600++;
  expect(mode.toString(8), `mode of ${file}`).toBe("600");
}

describe("tokens never leak", () => {
  for (const [label, token] of [
    ["Google-shaped token", TOKEN],
    ["token with no recognisable shape", PLAIN],
  ] as const) {
    it(
      `${label}: nothing in state, backups, saved plans, --json ` + `output, text output or emulator logs (umask 000)`,
      async () => {
        const env = { CLOUDNATIVE_ACCESS_TOKEN: token };
        const tokens = [token, VIEWER];
        const seed = seedWorld({
          [PROJECT]: {
            number: "200000000001",
            callers: { [token]: "user:admin@example.com", [VIEWER]: "user:eve@example.com" },
            iamAdmins: ["user:admin@example.com"],
          },
        });
        // The emulator runs as `converge emulator start --verbose`, so its log is checked too.
        const { stringify } = await import("yaml");
        writeFileSync(join(dir, "seed.yaml"), stringify(seed));
        let emuOut = "";
        const emuRun = startCli(["emulator", "start", "--port", "0", "--seed", "seed.yaml", "--verbose"], {
          cwd: dir,
          timeoutMs: 600_000,
          onLine: (l) => (emuOut += l + "\n"),
        });
        let hostPort = "";
        for (let i = 0; i < 400 && !hostPort && emuRun.child.exitCode === null; i++) {
          await sleep(25);
          hostPort = /listening on http:\/\/(\S+)/.exec(emuOut)?.[1] ?? "";
        }
        expect(hostPort).toMatch(/^127\.0\.0\.1:\d+$/);
        const e = { ...env, CLOUDNATIVE_EMULATOR_HOST: hostPort };
        const run = async (what: string, args: string[], code: number, extraEnv: Record<string, string> = {}) => {
          const r = await runCli(args, { cwd: dir, env: { ...e, ...extraEnv }, umask: "000" });
          expectExit(r, code, what);
          scanRun(what, r, tokens);
          return r;
        };
        try {
          writeFileSync(join(dir, "stack.yaml"), stackYaml("base", "rel", { objects: 3 }));
          await run("plan --out", ["plan", "-f", "stack.yaml", "--out", "plans/base.plan.json"], 0);
          await run("plan --json", ["plan", "-f", "stack.yaml", "--json"], 0);
          await run("apply saved plan", ["apply", "plans/base.plan.json", "--json"], 0);
          writeFileSync(join(dir, "stack.yaml"), stackYaml("changed", "rel", { objects: 3 }));
          await run(
            "plan --json --detailed-exitcode",
            ["plan", "-f", "stack.yaml", "--json", "--detailed-exitcode", "--out", "plans/changed.plan.json"],
            2,
          );
          await run("apply --json", ["apply", "--auto-approve", "-f", "stack.yaml", "--json"], 0);
          await run("refresh", ["refresh", "-f", "stack.yaml", "--json"], 0);
          await run("state list", ["state", "list", "-f", "stack.yaml"], 0);
          await run("state show", ["state", "show", "rp0_b0", "-f", "stack.yaml"], 0);
          await run("output --json", ["output", "-f", "stack.yaml", "--json"], 0);
          await run("plan --view access", ["plan", "-f", "stack.yaml", "--view", "access"], 0);
          await run("plan --format markdown", ["plan", "-f", "stack.yaml", "--format", "markdown"], 0);
          // The debug log (CONVERGE_LOG) names every call, on stderr or in CONVERGE_LOG_PATH, never a token.
          const logged = await run("plan with CONVERGE_LOG=debug", ["plan", "-f", "stack.yaml"], 0, {
            CONVERGE_LOG: "debug",
          });
          expect(logged.stderr).toMatch(/\[DEBUG\] getIamPolicy projects\/.*: 200 OK in \d+ ms \(attempt 1 of 10\)/);
          await run("denied plan with CONVERGE_LOG_PATH", ["plan", "-f", "stack.yaml"], 1, {
            CLOUDNATIVE_ACCESS_TOKEN: VIEWER,
            CONVERGE_LOG: "debug",
            CONVERGE_LOG_PATH: join(dir, "converge.log"),
          });
          expect(readFileSync(join(dir, "converge.log"), "utf8")).toMatch(
            /\[DEBUG\] getIamPolicy projects\/.*: 403 PERMISSION_DENIED/,
          );
          // Refused callers: the errors must not carry any token either.
          await run("plan as a viewer (PERMISSION_DENIED)", ["plan", "-f", "stack.yaml", "--json"], 1, {
            CLOUDNATIVE_ACCESS_TOKEN: VIEWER,
          });
          await run(
            "apply with an unknown token (UNAUTHENTICATED)",
            ["apply", "--auto-approve", "-f", "stack.yaml"],
            1,
            {
              CLOUDNATIVE_ACCESS_TOKEN: `${token}-revoked`,
            },
          );
          await run("destroy --json", ["destroy", "--auto-approve", "-f", "stack.yaml", "--json"], 0);

          const files = scanFiles(dir, tokens);
          // State, its backup and every saved plan: mode 0600 although the umask was 000.
          for (const f of [
            "state/rel.json",
            "state/rel.json.backup",
            "plans/base.plan.json",
            "plans/changed.plan.json",
          ]) {
            expect(files).toContain(join(dir, f));
            expectMode0600(join(dir, f));
          }
        } finally {
          emuRun.child.kill("SIGTERM");
          const r = await emuRun.done;
          scan("the emulator's --verbose log", r.stdout + r.stderr, [token]);
          expect(r.stderr).toMatch(/setIamPolicy 200 OK/); // the log did record the requests
        }
      },
      300_000,
    );
  }

  it("the lock file is mode 0600 while an apply holds it (umask 000)", async () => {
    const emu = await startWorld(seedWorld());
    try {
      await setFaults(emu, { latencyMs: 100, seed: 1 });
      writeFileSync(join(dir, "stack.yaml"), stackYaml("base"));
      const run = startCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: dir, emulator: emu, umask: "000" });
      const lock = join(dir, "state", "rel.json.lock");
      while (!existsSync(lock) && run.child.exitCode === null) await sleep(5);
      expectMode0600(lock);
      expectExit(await run.done, 0, "apply");
    } finally {
      await emu.close();
    }
  }, 180_000);

  it("a server that echoes the Authorization header in its errors: the token is still not printed", async () => {
    // Not Google's behaviour, but proxies and misconfigured gateways do it; converge redacts by value.
    const echo: Server = createServer((req, res) => {
      const auth = req.headers.authorization ?? "";
      const status = req.url?.includes("restorePlans") ? 400 : 403;
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          error: {
            code: status,
            status: status === 400 ? "INVALID_ARGUMENT" : "PERMISSION_DENIED",
            message: `rejected credentials ${auth} (token ${auth.replace(/^Bearer /, "")})`,
            details: [
              {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                reason: auth,
                domain: "googleapis.com",
                metadata: { authorization: auth },
              },
            ],
          },
        }),
      );
    });
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
    const port = (echo.address() as { port: number }).port;
    try {
      writeFileSync(join(dir, "stack.yaml"), stackYaml("base", "rel", { objects: 3 }));
      for (const token of [TOKEN, PLAIN]) {
        for (const args of [
          ["plan", "-f", "stack.yaml"],
          ["plan", "-f", "stack.yaml", "--json"],
          ["apply", "--auto-approve", "-f", "stack.yaml", "--json"],
        ]) {
          const r = await runCli(args, {
            cwd: dir,
            env: { CLOUDNATIVE_ACCESS_TOKEN: token, CLOUDNATIVE_EMULATOR_HOST: `127.0.0.1:${port}` },
          });
          expectExit(r, 1, args.join(" "));
          expect(r.stderr).toMatch(/rejected credentials/); // the server's message is shown …
          scanRun(`${args.join(" ")} against an echoing server`, r, [token]); // … without the token
        }
      }
      scanFiles(dir, [TOKEN, PLAIN]);
    } finally {
      await new Promise<void>((r) => echo.close(() => r()));
    }
  }, 180_000);
});

describe("the emulator binds loopback by default", () => {
  /** A non-loopback IPv4 address of this host, if it has one. */
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === "IPv4" && !i.internal)?.address;

  const reachable = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const s = connect(port, host, () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
      s.setTimeout(2000, () => {
        s.destroy();
        resolve(false);
      });
    });

  it("startEmulator() without a host listens on 127.0.0.1 only", async () => {
    const emu: RunningEmulator = await startEmulator({ seed: seedWorld() });
    try {
      expect(emu.host).toBe("127.0.0.1");
      expect(emu.url).toBe(`http://127.0.0.1:${emu.port}`);
      expect(await reachable("127.0.0.1", emu.port)).toBe(true);
      if (external) expect(await reachable(external, emu.port)).toBe(false);
    } finally {
      await emu.close();
    }
  });

  it("`converge emulator start` without --host listens on 127.0.0.1 only", async () => {
    let out = "";
    const run = startCli(["emulator", "start", "--port", "0"], { cwd: dir, onLine: (l) => (out += l + "\n") });
    try {
      for (let i = 0; i < 400 && !/listening on/.test(out); i++) await sleep(25);
      const m = /converge emulator listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      expect(m, out).not.toBeNull();
      const port = Number(m![1]);
      expect(await reachable("127.0.0.1", port)).toBe(true);
      if (external) expect(await reachable(external, port)).toBe(false);
    } finally {
      run.child.kill("SIGTERM");
      const r = await run.done;
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(/warning/i);
    }
  }, 60_000);
});
