// A script run as GitHub Actions runs a `run:` step (bash --noprofile --norc -eo pipefail),
// asynchronously (an emulator may be serving from this process), its stdout and stderr together.
import { spawn } from "node:child_process";

export function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const argv = ["--noprofile", "--norc", "-eo", "pipefail", "-c", script];
    const child = spawn("bash", argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });
}
