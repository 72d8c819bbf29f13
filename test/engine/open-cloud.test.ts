// Issue 12: mistakes in the environment or the embedded seed are the user's to fix: openCloud
// turns them into diagnostics (UserError), never an "internal error", and never names a
// credential. Nothing here opens a connection.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { openCloud } from "../../src/connect/cloud.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "converge-open-cloud-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function failure(provider: { endpoint: string; seed?: string }, env: NodeJS.ProcessEnv): Promise<UserError> {
  const e = await openCloud(provider, { env, stateDir: dir, stackName: "s" }).then(
    async (c) => {
      await c.close();
      throw new Error("openCloud succeeded");
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(UserError);
  return e as UserError;
}

describe("openCloud", () => {
  it.each([":::", "host:notaport", "http://x", ":8085", "http://u:hunter22@:99999"])(
    "CLOUDNATIVE_EMULATOR_HOST=%j is a diagnostic",
    async (value) => {
      const e = await failure({ endpoint: "google" }, { CLOUDNATIVE_EMULATOR_HOST: value });
      expect(e.diagnostics[0]!.summary).toMatch(/^CLOUDNATIVE_EMULATOR_HOST ".*" is not host:port/);
      expect(e.message).not.toContain("hunter22");
    },
  );

  it("a bad proxy URL is a diagnostic naming the variable", async () => {
    const e = await failure({ endpoint: "google" }, { HTTPS_PROXY: "::bad", CLOUDNATIVE_ACCESS_TOKEN: "t" });
    expect(e.diagnostics[0]!.summary).toBe("HTTPS_PROXY is not a valid URL");
  });

  it("an embedded seed that is not YAML is a diagnostic at its file and line", async () => {
    const seed = join(dir, "bad.seed.yaml");
    await writeFile(seed, "projects:\n  p: { number: '1'\nrestorePlans: []\n");
    const e = await failure({ endpoint: "embedded", seed }, {});
    expect(e.diagnostics[0]).toMatchObject({ severity: "error", file: seed, line: 3 });
    expect(e.diagnostics[0]!.summary).toMatch(/^emulator seed: invalid YAML: /);
  });

  it("an embedded seed of the wrong shape is a diagnostic at the offending line", async () => {
    const seed = join(dir, "shape.seed.yaml");
    await writeFile(
      seed,
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n    policy:\n      bindings: { role: x }\n",
    );
    const e = await failure({ endpoint: "embedded", seed }, {});
    expect(e.diagnostics[0]).toMatchObject({
      file: seed,
      line: 4,
      summary: "emulator seed: restorePlans[0].policy.bindings must be array",
    });
  });

  it("the description of the target never holds credentials", async () => {
    const c = await openCloud(
      { endpoint: "http://u:hunter22@127.0.0.1:9" },
      { env: {}, stateDir: dir, stackName: "s" },
    );
    const viaEnv = await openCloud(
      { endpoint: "google" },
      { env: { CLOUDNATIVE_EMULATOR_HOST: "http://u:hunter22@127.0.0.1:9" }, stateDir: dir, stackName: "s" },
    );
    // The plan's "Target:" line names host and port only (issue 13), never credentials.
    expect(c.target).toBe("emulator at 127.0.0.1:9");
    expect(viaEnv.target).toBe("emulator at http://127.0.0.1:9 (from CLOUDNATIVE_EMULATOR_HOST)");
    await c.close();
    await viaEnv.close();
  });
});
