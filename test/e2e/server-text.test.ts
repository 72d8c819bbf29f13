// Issue 12 (terminal), through the CLI against a malicious server on 127.0.0.1: error messages and
// federation fields that try to set the window title, clear the screen, fake "Apply complete!" on
// a line of their own, send a C1 CSI or reverse the text are printed with those characters
// escaped, on every path: diagnostics, apply progress, the plan, outputs and --json.
import { createServer, type Server } from "node:http";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FED, PROJECT, RP } from "../fixtures/builders.js";
import { bindingYaml } from "./apply-helpers.js";
import { expectExit, runCli, useTempDir } from "./helpers.js";

const EVIL = "\x1b]0;pwned\x07\x1b[2J\r\nApply complete!\x9b\u202e";
/** EVIL in a cloud error message, which has its whitespace folded into one line first. */
const SHOWN_IN_ERROR = "\\x1b]0;pwned\\x07\\x1b[2J Apply complete!\\x9b\\u202e";
/** Characters that must never reach the terminal from data. */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** What the server does with IAM calls: refuse reads, or allow reads and refuse writes. */
let mode: "deny-read" | "deny-write" = "deny-read";
let server: Server;
let host: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const send = (code: number, body: unknown) =>
        res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(body));
      const url = req.url ?? "";
      if (url.includes("/federations/"))
        return send(200, {
          name: FED,
          version: "3.1.2",
          state: "ACTIVE",
          labels: { owner: "data-eng" },
          endpointUri: `thrift://${EVIL}`,
        });
      if (url.includes(":getIamPolicy")) {
        if (mode === "deny-read")
          return send(403, { error: { code: 403, status: "PERMISSION_DENIED", message: `denied ${EVIL}` } });
        return send(200, { version: 1, etag: "BwAAAA==", bindings: [] });
      }
      if (url.includes(":setIamPolicy"))
        return send(400, { error: { code: 400, status: "INVALID_ARGUMENT", message: `bad ${EVIL}` } });
      send(404, { error: { code: 404, status: "NOT_FOUND", message: `no route ${EVIL}` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  host = `127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const tmp = useTempDir("converge-server-text-");

const LAKE =
  `variables:\n  lake:\n    fn::invoke:\n      function: ` +
  `cloudnative:metastore/v1alpha:getFederation\n      arguments: { federationId: lake, location: ` +
  `us-central1 }\n`;
const head = (name: string) => `name: ${name}\nprovider:\n  project: ${PROJECT}\n  location: us-central1\n${LAKE}`;
const OUTPUTS = "outputs:\n  lakeEndpoint: ${lake.endpointUri}\n";

async function workspace(name: string, resources: string): Promise<string> {
  const dir = join(tmp.dir, name);
  await mkdir(dir);
  await writeFile(join(dir, "stack.yaml"), head(name) + resources + OUTPUTS);
  return dir;
}

const cli = (dir: string, args: string[]) => runCli(args, { cwd: dir, env: { CLOUDNATIVE_EMULATOR_HOST: host } });

function expectClean(...texts: string[]): void {
  for (const t of texts) {
    expect(t).not.toMatch(RAW);
    expect(t).not.toContain("internal error");
  }
}

describe("text from a malicious server", { timeout: 60_000 }, () => {
  it("a refused read: the error diagnostic shows the server's message escaped (exit 1)", async () => {
    mode = "deny-read";
    const dir = await workspace(
      "denyread",
      "resources:\n" + bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]),
    );
    for (const args of [["plan"], ["plan", "--json"], ["apply", "--auto-approve"]]) {
      const r = await cli(dir, args);
      expectExit(r, 1);
      expectClean(r.stdout, r.stderr);
      expect(r.stderr).toContain(
        `Error: viewers: cannot read the IAM policy of ${RP}\n  resource viewers\n  getIamPolicy ` +
          `${RP}: PERMISSION_DENIED (403): denied ${SHOWN_IN_ERROR}\n`,
      );
    }
  });

  it(
    "a refused write: progress, plan and diagnostics show the " + "server's text escaped; no fake line (exit 1)",
    async () => {
      mode = "deny-write";
      const dir = await workspace(
        "denywrite",
        "resources:\n" + bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]),
      );
      const r = await cli(dir, ["apply", "--auto-approve"]);
      expectExit(r, 1);
      expectClean(r.stdout, r.stderr);
      expect(r.stdout).toContain(
        `\n  + lakeEndpoint = "thrift://\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nApply complete!\\x9b\\u202e"\n`,
      );
      expect(r.stdout).toContain(
        `\nviewers: Failed: setIamPolicy ${RP}: INVALID_ARGUMENT (400): bad ${SHOWN_IN_ERROR}\n`,
      );
      expect(r.stderr).toContain(
        `Error: viewers: cannot update the IAM policy of ${RP}\n  resource viewers\n  ` +
          `setIamPolicy ${RP}: INVALID_ARGUMENT (400): bad ${SHOWN_IN_ERROR}\n`,
      );
      expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/^Apply complete!/m);
    },
  );

  it(
    "federation fields in outputs: apply, output and output --json " +
      "escape them; --raw to a pipe is the exact value",
    async () => {
      mode = "deny-write";
      const dir = await workspace("outputs", "");
      const applied = await cli(dir, ["apply", "--auto-approve"]);
      expectExit(applied, 0);
      expectClean(applied.stdout, applied.stderr);
      expect(applied.stdout.match(/^Apply complete!/gm)).toHaveLength(1); // converge's own, and only that
      const printed = `lakeEndpoint = "thrift://\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nApply complete!\\x9b\\u202e"`;
      expect(applied.stdout).toContain(`\n${printed}\n`);

      const [human, json, one, raw, plan] = await Promise.all([
        cli(dir, ["output"]),
        cli(dir, ["output", "--json"]),
        cli(dir, ["output", "lakeEndpoint"]),
        cli(dir, ["output", "lakeEndpoint", "--raw"]),
        cli(dir, ["plan", "--json"]),
      ]);
      for (const r of [human, json, one, raw, plan]) expectExit(r, 0);
      expectClean(human.stdout, json.stdout, one.stdout, plan.stdout);
      expect(human.stdout).toBe(`${printed}\n`);
      expect(one.stdout).toBe(`"thrift://\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nApply complete!\\x9b\\u202e"\n`);
      // JSON is data: C1 and bidi characters are written as \u escapes, which parse to the same value.
      expect(json.stdout).toBe(
        `{\n  "lakeEndpoint": "thrift://\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nApply complete!\\u009b\\u202e"\n}\n`,
      );
      expect(JSON.parse(json.stdout)).toEqual({ lakeEndpoint: `thrift://${EVIL}` });
      expect(plan.stdout).toContain('"thrift://\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nApply complete!\\u009b\\u202e"');
      expect(
        (JSON.parse(plan.stdout) as { output_changes: Record<string, { after: unknown }> }).output_changes.lakeEndpoint!
          .after,
      ).toBe(`thrift://${EVIL}`);
      // --raw is for scripts ($(converge output --raw x)): to a pipe, the value exactly as stored.
      expect(raw.stdout).toBe(`thrift://${EVIL}\n`);
    },
  );
});
