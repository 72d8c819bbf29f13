// Issue 12 (network): converge pointed at a cloud it cannot trust. Every case runs the real CLI
// against a malicious server on 127.0.0.1 (./hostile-server.ts) and checks that it ends with a
// clear message naming what was called (never "internal error", never a stack trace), the exit
// code (1, or 0 where a retry legitimately succeeds), in bounded time (--call-timeout 2s), with no
// state written and no policy written. Nothing here talks to a non-loopback address.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, stackTraceLines, startCli, useTempDir, type CliResult } from "./helpers.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";
import {
  type Behaviour,
  deadPort,
  echoHeaders,
  googleError,
  hugeBody,
  iamBackend,
  onRead,
  reply,
  reset,
  slowDrip,
  startBlackhole,
  startHostile,
  steps,
  type HostileServer,
} from "./hostile-server.js";

/** Proxy settings inherited from the machine must not leak into these runs. */
const NO_PROXY_ENV = { HTTPS_PROXY: "", HTTP_PROXY: "", NO_PROXY: "", https_proxy: "", http_proxy: "", no_proxy: "" };
const RP = rp("nightly");
const FED = "projects/my-project/locations/us-central1/federations/lake";
const ROLE = "roles/gkebackup.viewer";
const STACK = stackHead("hostile") + bindingYaml("viewers", "nightly", ROLE, ["user:alice@example.com"]);
const FED_STACK =
  "name: hostile-fed\nprovider:\n  project: my-project\n  location: us-central1\n" +
  "variables:\n  lake:\n    fn::invoke:\n      function: " +
  "cloudnative:metastore/v1alpha:getFederation\n      arguments: { federationId: lake, location: " +
  "us-central1 }\n" +
  "resources:\n" +
  bindingYaml("viewers", "nightly", ROLE, ['"serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com"']);
/** Generous: the machine is loaded; without a deadline these cases take minutes or forever. */
const BOUND_MS = 15_000;

const tmp = useTempDir("converge-hostile-");
let n = 0;
const servers: { close: () => Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

beforeAll(async () => {
  await writeFile(join(tmp.dir, "stack.yaml"), STACK);
  await writeFile(join(tmp.dir, "fed.yaml"), FED_STACK);
});

async function serve(b: Behaviour): Promise<HostileServer> {
  const s = await startHostile(b);
  servers.push(s);
  return s;
}

interface Run extends CliResult {
  ms: number;
  statePath: string;
}

/** `apply --auto-approve --call-timeout 2s` of `stack` (default stack.yaml) with its own state file. */
async function apply(
  env: Record<string, string | undefined>,
  o: { stack?: string; args?: string[] } = {},
): Promise<Run> {
  const statePath = join(tmp.dir, `state-${++n}.json`);
  const { CLOUDNATIVE_EMULATOR_HOST: emulatorHost, ...rest } = env;
  const t0 = Date.now();
  const r = await runCli(
    [
      "apply",
      "--auto-approve",
      "--call-timeout",
      "2s",
      ...(o.args ?? []),
      "-f",
      join(tmp.dir, o.stack ?? "stack.yaml"),
      "--state",
      statePath,
    ],
    {
      cwd: tmp.dir,
      env: { ...NO_PROXY_ENV, ...rest },
      ...(emulatorHost !== undefined ? { emulatorHost } : {}),
      timeoutMs: 40_000,
    },
  );
  return { ...r, ms: Date.now() - t0, statePath };
}

/** What every hostile case must show: the exit code, a clean message, bounded time. */
function expectClean(r: Run, code: number, boundMs = BOUND_MS): void {
  const out =
    `--- exit ${r.code} (signal ${r.signal}) after ${r.ms} ms\n--- ` + `stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  expect(r.code, out).toBe(code);
  expect(r.stderr, out).not.toMatch(/internal error/i);
  expect(stackTraceLines(r.stderr), out).toEqual([]);
  expect(r.ms, out).toBeLessThan(boundMs);
  if (code !== 0) expect(existsSync(r.statePath), out).toBe(false);
}

const writes = (s: HostileServer) => s.seen.filter((x) => x.url.includes(":setIamPolicy")).length;

describe.concurrent("a hostile cloud: every bad answer is a clear error", () => {
  it.each<[string, () => Behaviour, RegExp]>([
    [
      "a declared body over 32 MiB",
      () => hugeBody(true),
      new RegExp(`getIamPolicy ${RP}: .*response body is larger than 32 MiB`),
    ],
    [
      "a body that never ends",
      () => hugeBody(false),
      new RegExp(`getIamPolicy ${RP}: .*response body is larger than 32 MiB`),
    ],
    [
      "invalid JSON",
      () => reply(200, '{"bindings": [{"role": '),
      new RegExp(`getIamPolicy ${RP}: .*the response is not valid JSON`),
    ],
    [
      "members as a string",
      () => reply(200, { bindings: [{ role: ROLE, members: "user:alice@example.com" }], etag: "e0" }),
      /not a valid IAM policy: bindings\[0\]\.members must be array/,
    ],
    [
      "bindings as an object",
      () => reply(200, { bindings: { role: ROLE, members: [] }, etag: "e0" }),
      /not a valid IAM policy: bindings must be array/,
    ],
    [
      "a binding without role",
      () => reply(200, { bindings: [{ members: ["user:alice@example.com"] }], etag: "e0" }),
      /not a valid IAM policy: bindings\[0\] must have required property 'role'/,
    ],
    [
      "an etag that is not a string",
      () => reply(200, { bindings: [], etag: 7 }),
      /not a valid IAM policy: etag must be string/,
    ],
    ["a policy that is an array", () => reply(200, [{ bindings: [] }]), /not a valid IAM policy: .*must be object/],
  ])("%s: exit 1 naming the method and the object, nothing written", async (_name, behaviour, message) => {
    const s = await serve(onRead(behaviour(), iamBackend()));
    // What is checked is the answer, not the time: reading 32 MiB on a loaded machine may take
    // longer than the other cases' 2 s call timeout, which would then be what the error says.
    const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: s.hostPort }, { args: ["--call-timeout", "60s"] });
    expectClean(r, 1, Infinity);
    expect(r.stderr).toMatch(new RegExp(`getIamPolicy ${RP}`));
    expect(r.stderr).toMatch(message);
    expect(writes(s)).toBe(0);
    // The client stopped reading: far less than the 64 MiB (or endless) body was sent.
    expect(s.bytesSent()).toBeLessThan(48 * 1024 * 1024);
  });

  it("a federation of the wrong shape: exit 1 naming getFederation and the object", async () => {
    const s = await serve((req, res, seen, i) =>
      seen.url.includes("/federations/")
        ? reply(200, { name: FED, labels: "data-eng", state: "ACTIVE" })(req, res, seen, i)
        : iamBackend()(req, res, seen, i),
    );
    const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: s.hostPort }, { stack: "fed.yaml" });
    expectClean(r, 1);
    expect(r.stderr).toMatch(new RegExp(`getFederation ${FED}: .*not a valid federation: labels must be object`));
    expect(writes(s)).toBe(0);
  });

  it.each<[string, () => Behaviour, RegExp[]]>([
    [
      "endless 503 with Retry-After: 3600",
      () => googleError(503, "UNAVAILABLE", "come back in an hour", { "Retry-After": "3600" }),
      [/UNAVAILABLE \(503\): come back in an hour/, /Retry-After 3600s/, /call timeout 2s/],
    ],
    ["a slow drip (headers, then a byte a second)", slowDrip, [/DEADLINE_EXCEEDED/, /call timeout 2s/]],
    [
      "connection reset on every request",
      () => reset,
      [/failed after \d+ attempts over \d+\.\ds/, /UNAVAILABLE: network error ECONNRESET/],
    ],
  ])("%s: exit 1 in bounded time, saying what was tried", async (_name, behaviour, messages) => {
    const s = await serve(behaviour());
    const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: s.hostPort });
    expectClean(r, 1);
    expect(r.stderr).toMatch(new RegExp(`getIamPolicy ${RP}`));
    for (const m of messages) expect(r.stderr).toMatch(m);
    expect(writes(s)).toBe(0);
  });

  it("a dead endpoint (connection refused): exit 1 in bounded time, with the attempts made", async () => {
    const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: `127.0.0.1:${await deadPort()}` });
    expectClean(r, 1);
    expect(r.stderr).toMatch(
      new RegExp(`getIamPolicy ${RP} failed after \\d+ attempts over \\d+\\.\\ds.*ECONNREFUSED`),
    );
  });

  it("a blackholed endpoint (accepts, never answers): exit 1 at the call timeout", async () => {
    const b = await startBlackhole();
    servers.push(b);
    const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: b.hostPort });
    expectClean(r, 1);
    expect(r.stderr).toMatch(
      new RegExp(
        `getIamPolicy ${RP} failed after \\d+ attempts? over \\d+\\.\\ds \\(call timeout 2s\\): DEADLINE_EXCEEDED`,
      ),
    );
  });

  it("--timeout: the whole command stops like a Ctrl-C, exits 1 and releases the lock", async () => {
    const s = await serve(slowDrip());
    const r = await apply(
      { CLOUDNATIVE_EMULATOR_HOST: s.hostPort },
      { args: ["--call-timeout", "60s", "--timeout", "2s"] },
    );
    expectClean(r, 1);
    expect(r.stderr).toMatch(/--timeout 2s reached/);
    expect(existsSync(`${r.statePath}.lock`)).toBe(false);
  });

  it("--timeout while waiting for the state lock (where Ctrl-C ends the process at once): exit 1 at once", async () => {
    const s = await serve(slowDrip());
    const statePath = join(tmp.dir, "locked.json");
    const args = [
      "apply",
      "--auto-approve",
      "--call-timeout",
      "60s",
      "-f",
      join(tmp.dir, "stack.yaml"),
      "--state",
      statePath,
    ];
    const holder = startCli(args, { cwd: tmp.dir, emulatorHost: s.hostPort, env: NO_PROXY_ENV });
    while (!existsSync(`${statePath}.lock`)) await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    const r = await runCli([...args, "--lock-timeout", "60s", "--timeout", "1s"], {
      cwd: tmp.dir,
      emulatorHost: s.hostPort,
      env: NO_PROXY_ENV,
      timeoutMs: 40_000,
    });
    expectClean({ ...r, ms: Date.now() - t0, statePath }, 1);
    expect(r.stderr).toContain("converge: --timeout 1s reached: stopped.");
    holder.child.kill("SIGINT");
    expect((await holder.doneWithin(10_000)).code).toBe(130);
  });

  it("--timeout during import's read: exit 1 saying the read was stopped", async () => {
    const s = await serve(slowDrip());
    const statePath = join(tmp.dir, "import.json");
    const t0 = Date.now();
    const r = await runCli(
      [
        "import",
        "--call-timeout",
        "60s",
        "--timeout",
        "2s",
        "-f",
        join(tmp.dir, "stack.yaml"),
        "--state",
        statePath,
        "viewers",
        `${RP} ${ROLE}`,
      ],
      {
        cwd: tmp.dir,
        emulatorHost: s.hostPort,
        env: NO_PROXY_ENV,
        timeoutMs: 40_000,
      },
    );
    expectClean({ ...r, ms: Date.now() - t0, statePath }, 1);
    expect(r.stderr).toContain(`getIamPolicy ${RP}: CANCELLED: stopped: --timeout 2s reached: abandoned in flight`);
    expect(existsSync(`${statePath}.lock`)).toBe(false);
  });
});

describe.concurrent("500 INTERNAL is retried where a repeat is safe", () => {
  it("a read: 500 then OK applies", async () => {
    const backend = iamBackend();
    const s = await serve(steps(googleError(500, "INTERNAL", "Internal error encountered."), backend));
    const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: s.hostPort });
    expectClean(r, 0);
    expect(r.stdout).toContain("Apply complete! Resources: 1 added");
    expect(backend.writes()).toBe(1);
  });

  it(
    "an etag-guarded write that succeeded but answered 500: the " + "repeat is ABORTED, the re-read shows it done",
    async () => {
      const backend = iamBackend();
      let failedOnce = false;
      const s = await serve(async (req, res, seen, i) => {
        if (!failedOnce && seen.url.includes(":setIamPolicy")) {
          failedOnce = true;
          // The write happens, the answer is lost in a 500.
          await backend(req, { writeHead: () => undefined, end: () => undefined } as never, seen, i);
          return googleError(500, "INTERNAL", "Internal error encountered.")(req, res, seen, i);
        }
        return backend(req, res, seen, i);
      });
      const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: s.hostPort });
      expectClean(r, 0);
      expect(backend.writes()).toBe(1);
      expect(backend.policies.get(RP)?.bindings).toEqual([{ role: ROLE, members: ["user:alice@example.com"] }]);
    },
  );
});

describe.concurrent("credentials never leave their place", () => {
  const SECRET = "s3cret-pw";
  const BASIC = Buffer.from(`alice:${SECRET}`).toString("base64");
  const leaks = (text: string) => [SECRET, BASIC, encodeURIComponent(SECRET)].filter((s) => text.includes(s));

  it.each([
    ["HTTP_PROXY", "http://iam.converge-test.invalid:8080"],
    ["HTTPS_PROXY", "https://iam.converge-test.invalid"],
  ])(
    "a proxy (%s) echoing Proxy-Authorization in its error page: redacted from every message",
    async (variable, endpoint) => {
      const s = await serve(echoHeaders);
      await writeFile(
        join(tmp.dir, `proxied-${variable}.yaml`),
        STACK.replace("resources:\n", `  endpoint: ${endpoint}\nresources:\n`),
      );
      const r = await apply(
        { [variable]: `http://alice:${SECRET}@${s.hostPort}`, CLOUDNATIVE_ACCESS_TOKEN: "test-token" },
        { stack: `proxied-${variable}.yaml` },
      );
      expectClean(r, 1);
      // The proxy did get the credentials, and echoed them.
      expect(s.seen[0]?.headers["proxy-authorization"]).toBe(`Basic ${BASIC}`);
      expect(r.stderr).toMatch(new RegExp(`getIamPolicy ${RP}`));
      expect(r.stderr).toContain("[redacted]");
      expect(leaks(r.stdout + r.stderr)).toEqual([]);
    },
  );

  it(
    "user:password in provider.endpoint or " + "CLOUDNATIVE_EMULATOR_HOST: never in plans, state, logs or output",
    async () => {
      const s = await serve(iamBackend());
      const url = `http://alice:${SECRET}@${s.hostPort}`;
      await writeFile(
        join(tmp.dir, "userinfo.yaml"),
        STACK.replace("resources:\n", `  endpoint: ${url}\nresources:\n`),
      );
      const log = join(tmp.dir, "userinfo.log");
      const planFile = join(tmp.dir, "userinfo.plan.json");
      const env = { CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: log };
      const statePath = join(tmp.dir, "userinfo.state.json");
      const planned = await runCli(
        ["plan", "--json", "--out", planFile, "-f", join(tmp.dir, "userinfo.yaml"), "--state", statePath],
        { cwd: tmp.dir, env: { ...NO_PROXY_ENV, ...env } },
      );
      expect(planned.code, planned.stderr).toBe(0);
      const applied = await runCli(["apply", planFile, "-f", join(tmp.dir, "userinfo.yaml"), "--state", statePath], {
        cwd: tmp.dir,
        env: { ...NO_PROXY_ENV, ...env },
      });
      expect(applied.code, applied.stderr).toBe(0);
      const viaEnv = await apply({ ...env, CLOUDNATIVE_EMULATOR_HOST: url });
      expectClean(viaEnv, 0);
      const dead = await apply({
        ...env,
        CLOUDNATIVE_EMULATOR_HOST: `http://alice:${SECRET}@127.0.0.1:${await deadPort()}`,
      });
      expectClean(dead, 1);
      const files = [planFile, statePath, viaEnv.statePath, log].map((f) => readFileSync(f, "utf8")).join("\n");
      const printed = [planned, applied, viaEnv, dead].map((x) => x.stdout + x.stderr).join("\n");
      expect(leaks(files + printed)).toEqual([]);
      expect(s.seen.length).toBeGreaterThan(0);
    },
  );
});

describe.concurrent("mistakes in the environment or the embedded seed are diagnostics", () => {
  it.each([":::", "host:notaport", "http://x", ":8085", "127.0.0.1:99999", "127.0.0.1:8085/path?q=1"])(
    "CLOUDNATIVE_EMULATOR_HOST=%j: exit 1 with a clear message",
    async (value) => {
      const r = await apply({ CLOUDNATIVE_EMULATOR_HOST: value });
      expectClean(r, 1);
      expect(r.stderr).toMatch(/CLOUDNATIVE_EMULATOR_HOST .*host:port/);
    },
  );

  it.each([
    [
      "bad YAML",
      "seed-yaml",
      'projects:\n  my-project: { number: "1"\nrestorePlans: []\n',
      /seed\.yaml:3:\d+.*invalid YAML/,
    ],
    [
      "a wrong shape",
      "seed-shape",
      'projects:\n  my-project:\n    number: "123456789012"\nrestorePlans:\n  - name: ' +
        "projects/my-project/locations/us-central1/restorePlans/nightly\n    policy:\n      bindings: { role: x }\n",
      /seed\.yaml:7:\d+.*restorePlans\[0\]\.policy\.bindings must be array/,
    ],
  ])("an embedded seed with %s: exit 1 naming the seed file and the line", async (_name, dir, seed, message) => {
    await mkdir(join(tmp.dir, dir), { recursive: true });
    await writeFile(join(tmp.dir, dir, "seed.yaml"), seed);
    await writeFile(
      join(tmp.dir, dir, "stack.yaml"),
      STACK.replace("resources:\n", "  endpoint: embedded\n  seed: seed.yaml\nresources:\n"),
    );
    const r = await apply({}, { stack: join(dir, "stack.yaml") });
    expectClean(r, 1);
    expect(r.stderr).toMatch(message);
  });

  it(
    "endpoint google with unreadable credentials: a message about " +
      "Application Default Credentials, no network call",
    async () => {
      const trap = await serve(reset);
      const r = await apply({
        HOME: tmp.dir,
        CLOUDSDK_CONFIG: join(tmp.dir, "no-gcloud"),
        GOOGLE_APPLICATION_CREDENTIALS: join(tmp.dir, "missing-credentials.json"),
        HTTPS_PROXY: `http://${trap.hostPort}`,
        CLOUDNATIVE_ACCESS_TOKEN: "",
        GOOGLE_OAUTH_ACCESS_TOKEN: "",
      });
      expectClean(r, 1);
      expect(r.stderr).toMatch(/Application Default Credentials/);
      expect(r.stderr).toMatch(/GOOGLE_APPLICATION_CREDENTIALS/);
      expect(trap.seen).toEqual([]);
    },
  );

  it("endpoint google with no credentials at all: no MetadataLookupWarning noise", async () => {
    // The metadata server google-auth-library probes is a loopback server that cuts connections.
    const metadata = await serve(reset);
    const trap = await serve(reset);
    const r = await apply({
      HOME: tmp.dir,
      CLOUDSDK_CONFIG: join(tmp.dir, "no-gcloud"),
      GOOGLE_APPLICATION_CREDENTIALS: "",
      GCE_METADATA_HOST: metadata.hostPort,
      HTTPS_PROXY: `http://${trap.hostPort}`,
      CLOUDNATIVE_ACCESS_TOKEN: "",
      GOOGLE_OAUTH_ACCESS_TOKEN: "",
    });
    expectClean(r, 1);
    // google-auth-library probed the metadata server (directly, or tunnelled through the proxy:
    // gaxios sends plain http through HTTPS_PROXY too), and its lookup failed.
    expect([...metadata.seen.map((x) => x.url), ...trap.seen.map((x) => x.url)]).toContainEqual(
      expect.stringMatching(new RegExp(`/computeMetadata/|^${metadata.hostPort}$`)),
    );
    expect(r.stderr).toMatch(/Application Default Credentials/);
    expect(r.stderr).not.toMatch(/MetadataLookupWarning|--trace-warnings/);
    expect(trap.seen.filter((x) => /googleapis/.test(x.url))).toEqual([]);
  });

  it("a bad proxy URL (HTTPS_PROXY=::bad): exit 1 naming the variable, nothing sent", async () => {
    const r = await apply({ HTTPS_PROXY: "::bad", CLOUDNATIVE_ACCESS_TOKEN: "test-token" });
    expectClean(r, 1);
    expect(r.stderr).toMatch(/HTTPS_PROXY is not a valid URL/);
  });
});
