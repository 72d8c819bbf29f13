// Calls go through the proxy the environment names, as with Terraform: HTTPS_PROXY tunnels https
// with CONNECT (TLS end to end, the proxy's credentials sent to the proxy only), HTTP_PROXY takes
// http in absolute form, NO_PROXY and loopback addresses go direct. Everything on 127.0.0.1: a
// CONNECT/forward proxy, a TLS front with a certificate from a test CA (trusted by the CLI through
// NODE_EXTRA_CA_CERTS), and the emulator behind it. Host names end in .invalid: they cannot resolve,
// so a call that reaches them at all went through the proxy.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { expectExit, resetStats, runCli, startSeededEmulator, stats, tempDir } from "./helpers.js";
import { bindingYaml, ep, getCalls, memberYaml, rp, setCalls } from "./apply-helpers.js";

const HAS_OPENSSL = existsSync("/usr/bin/openssl");
/** Proxy settings inherited from the machine must not leak into these runs: each run names its own. */
const NO_INHERITED_PROXY = {
  HTTPS_PROXY: "",
  HTTP_PROXY: "",
  NO_PROXY: "",
  https_proxy: "",
  http_proxy: "",
  no_proxy: "",
};
const HOST = "iam.converge-test.invalid";
const AUTH = `Basic ${Buffer.from("alice:s3cret").toString("base64")}`;

const stack = (endpoint: string) =>
  `name: proxied\nprovider:\n  project: my-project\n  location: us-central1\n  endpoint: ${endpoint}\nresources:\n` +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "user:bob@example.com");

let emu: RunningEmulator;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let tls: TlsServer;
let proxy: Server;
let proxyUrl: string;
const sockets = new Set<Socket>();
/** What the proxy saw: CONNECT targets and absolute-form request URLs, with their Proxy-Authorization. */
let seen: { kind: "connect" | "forward"; target: string; auth: string | undefined }[] = [];

function makeCertificates(dir: string): { key: string; cert: string; ca: string } {
  const run = (...args: string[]) => execFileSync("/usr/bin/openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=converge test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  run("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", `/CN=${HOST}`);
  writeFileSync(join(dir, "server.ext"), `subjectAltName=DNS:${HOST}\nextendedKeyUsage=serverAuth\n`);
  run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  );
  return {
    key: readFileSync(join(dir, "server.key"), "utf8"),
    cert: readFileSync(join(dir, "server.pem"), "utf8"),
    ca: join(dir, "ca.pem"),
  };
}

const listen = (s: Server | TlsServer) =>
  new Promise<number>((r) => s.listen(0, "127.0.0.1", () => r((s.address() as { port: number }).port)));
const track = (s: Socket) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
  s.on("error", () => {});
};

let ca: string;

beforeAll(async () => {
  if (!HAS_OPENSSL) return;
  emu = await startSeededEmulator(
    {
      projects: { "my-project": { number: "123456789012" } },
      restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
      endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
      // Reached through the proxy and the TLS front by these names (the emulator refuses other Hosts).
    },
    { allowedHosts: [HOST, "emu.converge-test.invalid"] },
  );
  tmp = await tempDir("converge-proxy-");
  const certs = makeCertificates(tmp.dir);
  ca = certs.ca;
  // The TLS front: decrypts and hands the bytes to the emulator.
  tls = createTlsServer({ key: certs.key, cert: certs.cert }, (s) => {
    track(s);
    const up = connect(emu.port, "127.0.0.1");
    track(up);
    s.pipe(up).pipe(s);
  });
  const tlsPort = await listen(tls);
  proxy = createServer((req, res) => {
    // Absolute form (HTTP_PROXY): forward to the emulator whatever host the URL names.
    seen.push({ kind: "forward", target: req.url!, auth: req.headers["proxy-authorization"] });
    const u = new URL(req.url!);
    const up = request(
      {
        host: "127.0.0.1",
        port: emu.port,
        method: req.method,
        path: u.pathname + u.search,
        headers: { ...req.headers, host: u.host },
      },
      (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  proxy.on("connection", track);
  proxy.on("connect", (req, client: Socket, head: Buffer) => {
    // CONNECT (HTTPS_PROXY): a tunnel to the TLS front, whatever host is asked for; a host named
    // refuse-NNN.… is refused with that status, as a proxy's policy or its authentication would.
    seen.push({ kind: "connect", target: req.url!, auth: req.headers["proxy-authorization"] });
    const refused = /^refuse-(\d{3})\./.exec(req.url!);
    if (refused) return void client.end(`HTTP/1.1 ${refused[1]} Refused by policy\r\nContent-Length: 0\r\n\r\n`);
    const up = connect(tlsPort, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.write(head);
      up.pipe(client).pipe(up);
    });
    track(up);
  });
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([proxy && new Promise((r) => proxy.close(r)), tls && new Promise((r) => tls.close(r))]);
  await emu?.close();
  await tmp?.remove();
});

beforeEach(async () => {
  seen = [];
  if (emu) await resetStats(emu);
});

describe.skipIf(!HAS_OPENSSL)("calls through a proxy", () => {
  it(
    "HTTPS_PROXY: plan and apply tunnel through CONNECT with the " + "proxy's credentials, which are never printed",
    async () => {
      const file = join(tmp.dir, "https.yaml");
      writeFileSync(file, stack(`https://${HOST}`));
      const env = {
        ...NO_INHERITED_PROXY,
        HTTPS_PROXY: proxyUrl.replace("http://", "http://alice:s3cret@"),
        NODE_EXTRA_CA_CERTS: ca,
      };
      const state = join(tmp.dir, "https.state.json");
      const planned = await runCli(["plan", "-f", file, "--state", state], { cwd: tmp.dir, env });
      expectExit(planned, 0);
      expect(planned.stdout).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
      const applied = await runCli(["apply", "--auto-approve", "-f", file, "--state", state], { cwd: tmp.dir, env });
      expectExit(applied, 0);
      expect(applied.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
      const s = await stats(emu);
      expect(getCalls(s)).toBe(4);
      expect(setCalls(s)).toBe(2);
      expect(seen.length).toBeGreaterThan(0);
      for (const c of seen) expect(c).toEqual({ kind: "connect", target: `${HOST}:443`, auth: AUTH });
      for (const out of [planned.stdout, planned.stderr, applied.stdout, applied.stderr, readFileSync(state, "utf8")])
        expect(out).not.toContain("s3cret");
    },
  );

  it("NO_PROXY: the host is reached directly (here: it cannot resolve), the proxy sees nothing", async () => {
    const file = join(tmp.dir, "noproxy.yaml");
    writeFileSync(file, stack(`https://${HOST}`));
    const env = {
      ...NO_INHERITED_PROXY,
      HTTPS_PROXY: proxyUrl,
      NO_PROXY: "converge-test.invalid",
      NODE_EXTRA_CA_CERTS: ca,
    };
    // A resolver that cannot answer (EAI_AGAIN) is retried with backoff: allow for it.
    const r = await runCli(["plan", "-f", file, "--state", join(tmp.dir, "noproxy.state.json")], {
      cwd: tmp.dir,
      env,
      timeoutMs: 120_000,
    });
    expectExit(r, 1);
    expect(r.stderr).toMatch(/getaddrinfo (ENOTFOUND|EAI_AGAIN) iam\.converge-test\.invalid/);
    expect(seen).toEqual([]);
  }, 150_000);

  it("HTTP_PROXY: an http endpoint is sent to the proxy in absolute form; loopback stays direct", async () => {
    const file = join(tmp.dir, "http.yaml");
    writeFileSync(file, stack(`http://emu.converge-test.invalid:${emu.port}`));
    const r = await runCli(["plan", "-f", file, "--state", join(tmp.dir, "http.state.json")], {
      cwd: tmp.dir,
      env: { ...NO_INHERITED_PROXY, HTTP_PROXY: proxyUrl },
    });
    expectExit(r, 0);
    expect(seen.length).toBe(2);
    for (const c of seen)
      expect(c.target).toMatch(
        new RegExp(
          `^http://emu\\.converge-test\\.invalid:${emu.port}/v1(beta1)?/projects/my-project/locations/us-central1/`,
        ),
      );

    seen = [];
    writeFileSync(file, stack(emu.url));
    const direct = await runCli(["plan", "-f", file, "--state", join(tmp.dir, "http.state.json")], {
      cwd: tmp.dir,
      env: { ...NO_INHERITED_PROXY, HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl },
    });
    expectExit(direct, 0);
    expect(seen).toEqual([]);
  });

  it(
    "a proxy that refuses the tunnel (403, 404, 407) is a proxy " + "error naming the proxy, not the cloud's answer",
    async () => {
      for (const status of ["403", "404", "407"]) {
        const file = join(tmp.dir, `refused-${status}.yaml`);
        writeFileSync(file, stack(`https://refuse-${status}.converge-test.invalid`));
        const env = {
          ...NO_INHERITED_PROXY,
          HTTPS_PROXY: proxyUrl.replace("http://", "http://alice:s3cret@"),
          NODE_EXTRA_CA_CERTS: ca,
        };
        const r = await runCli(["plan", "-f", file, "--state", join(tmp.dir, `refused-${status}.state.json`)], {
          cwd: tmp.dir,
          env,
        });
        expectExit(r, 1);
        expect(r.stderr).toContain(
          `the proxy ${proxyUrl} refused the tunnel to refuse-${status}` +
            `.converge-test.invalid:443: ${status} Refused by policy`,
        );
        expect(r.stderr).not.toMatch(/does not exist|PERMISSION_DENIED|internal error/);
        expect(r.stderr).not.toContain("s3cret");
      }
    },
  );
});
