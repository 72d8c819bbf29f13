// A server that echoes part of the access token it was sent (its first 20 characters, its last
// 12, a slice from the middle) had that part printed: only the whole token was redacted. Through
// the CLI against such a server on 127.0.0.1: no slice of 8 characters or more of the token reaches
// stdout or stderr, text or --json. Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindingYaml, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useTempDir } from "./helpers.js";
import { startHostile, type HostileServer } from "./hostile-server.js";

const TOKEN = "tok3n.Qm9vZ2xlLXNheXMtbm8tdG9rZW5zLWluLWxvZ3M_x7Kp2Wz9";
const NO_PROXY_ENV = { HTTPS_PROXY: "", HTTP_PROXY: "", NO_PROXY: "", https_proxy: "", http_proxy: "", no_proxy: "" };
const tmp = useTempDir("converge-token-slices-");
let server: HostileServer;

beforeAll(async () => {
  server = await startHostile((req, res) => {
    const sent = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    const message = `token ${sent.slice(0, 20)}… is not valid (ends ${sent.slice(-12)}, id ${sent.slice(18, 34)})`;
    const body = JSON.stringify({ error: { code: 401, status: "UNAUTHENTICATED", message } });
    res.writeHead(401, { "Content-Type": "application/json" }).end(body);
  });
  await writeFile(
    join(tmp.dir, "stack.yaml"),
    stackHead("slices") + bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]),
  );
});
afterAll(() => server.close());

/** Every slice of 8 characters of the token found in `text`. */
function slicesIn(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + 8 <= TOKEN.length; i++)
    if (text.includes(TOKEN.slice(i, i + 8))) found.push(TOKEN.slice(i, i + 8));
  return found;
}

describe("slices of the access token echoed by a server", { timeout: 60_000 }, () => {
  it.each([[["plan"]], [["plan", "--json"]]])("are redacted: %j", async (args) => {
    const r = await runCli([...args, "-f", "stack.yaml", "--state", "state.json"], {
      cwd: tmp.dir,
      env: { ...NO_PROXY_ENV, CLOUDNATIVE_EMULATOR_HOST: server.hostPort, CLOUDNATIVE_ACCESS_TOKEN: TOKEN },
    });
    expectExit(r, 1);
    expect(server.seen.some((s) => s.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/is not valid/);
    expect(out).toContain("[redacted]");
    expect(slicesIn(out)).toEqual([]);
  });
});
