import { InvalidArgumentError, type Command } from "commander";
import { ALL_KINDS, kindLabel } from "../../gcp/object-kinds.js";

/** The port `converge emulator start` uses when none is given (0 picks a free one). */
export const DEFAULT_EMULATOR_PORT = 8790;

function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("expected a port number from 0 to 65535");
  return n;
}

interface StartOptions {
  port: number;
  host: string;
  seed?: string;
  data?: string;
  verbose?: boolean;
  allowHost: string[];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

// `converge emulator start`: runs the local cloud emulator in the foreground until SIGINT/SIGTERM/SIGHUP.
export function registerEmulator(program: Command): void {
  const emulator = program.command("emulator").description("Run the local cloud emulator");
  emulator
    .command("start")
    .description(
      `Serve the emulated Google APIs (${ALL_KINDS.map((k) => `${kindLabel(k)}s`).join(", ")}) until interrupted`,
    )
    .option("--port <n>", "port to listen on (0 = any free port)", parsePort, DEFAULT_EMULATOR_PORT)
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--seed <file>", "YAML seed file declaring projects, callers and objects")
    .option("--data <file>", "JSON data file persisting the world (loaded instead of the seed when it exists)")
    .option(
      "--allow-host <name>",
      "also serve requests whose Host is this name (behind a reverse proxy or TLS front; repeatable)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option("--verbose", "log every request to stderr")
    .action(async (opts: StartOptions) => {
      const stderr = (line: string): void => void process.stderr.write(`${line}\n`);
      // Loaded here, not at start-up: no other command needs the emulator (connect/cloud.ts loads it lazily too).
      const { startEmulator } = await import("../../emulator/index.js");
      let running;
      try {
        running = await startEmulator({
          host: opts.host,
          port: opts.port,
          ...(opts.seed ? { seedFile: opts.seed } : {}),
          ...(opts.data ? { dataFile: opts.data } : {}),
          ...(opts.verbose ? { log: stderr } : {}),
          allowedHosts: opts.allowHost,
        });
      } catch (e) {
        // User errors (bad seed, port in use): one line, no stack trace.
        stderr(`converge: error: ${(e as Error).message}`);
        process.exit(1);
      }
      const emu = running;
      let stopping = false;
      const stop = (signal: string): void => {
        if (stopping) {
          stderr(`converge: ${signal} again, exiting without waiting`);
          process.exit(130);
        }
        stopping = true;
        emu.close().then(
          () => process.exit(0),
          (e: unknown) => {
            stderr(`converge: error: while stopping the emulator: ${(e as Error).message}`);
            process.exit(1);
          },
        );
      };
      // Before the address is printed: whoever reads it may stop the emulator at once.
      process.on("SIGINT", () => stop("SIGINT"));
      process.on("SIGTERM", () => stop("SIGTERM"));
      // A closed terminal or SSH session: the data file is flushed as on SIGTERM.
      process.on("SIGHUP", () => stop("SIGHUP"));
      if (!LOOPBACK.has(opts.host)) {
        stderr(
          `converge: warning: listening on ${opts.host}; anyone who can reach ` +
            `it can read and change the emulated policies`,
        );
      }
      process.stdout.write(
        `converge emulator listening on ${running.url}\nexport CLOUDNATIVE_EMULATOR_HOST=${running.hostPort}\n`,
      );
    });
}
