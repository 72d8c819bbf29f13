// Seed files: the SPEC's example loads; every kind of mistake is refused naming file and problem.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSeedFile, startEmulator, WorldError } from "../../src/emulator/index.js";
import { api, tempDir } from "./helpers.js";

const SPEC_SEED = `projects:
  my-project:
    number: "123456789012"
    callers: { admin-token: user:admin@example.com, viewer-token: user:eve@example.com }
    iamAdmins: [user:admin@example.com]
restorePlans:
  - name: projects/my-project/locations/us-central1/restorePlans/nightly
    policy: { bindings: [ { role: roles/gkebackup.viewer, members: [user:carol@example.com] } ] }
endpoints:
  - name: projects/my-project/locations/us-central1/endpoints/churn
    policy: { bindings: [] }
federations:
  - name: projects/my-project/locations/us-central1/federations/lake
    version: 3.1.2
    state: ACTIVE
    labels: { owner: data-eng }
    endpointUri: thrift://10.0.0.7:9083
    backendMetastores:
      "1": { name: projects/my-project/locations/us-central1/services/hive, metastoreType: DATAPROC_METASTORE }
`;

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

async function seedFile(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

describe("loadSeedFile", () => {
  it("loads the SPEC's example", async () => {
    const world = loadSeedFile(await seedFile("seed.yaml", SPEC_SEED));
    expect(world.projects?.["my-project"]?.number).toBe("123456789012");
    expect(world.restorePlans).toHaveLength(1);
    expect(world.federations?.[0]?.version).toBe("3.1.2");
  });

  it("accepts an unquoted project number and infers version 3 for conditional seed policies", async () => {
    const world = loadSeedFile(
      await seedFile(
        "seed.yaml",
        `projects: { p: { number: 42 } }
restorePlans:
  - name: projects/p/locations/l/restorePlans/r
    policy:
      bindings:
        - role: roles/x.y
          members: [user:a@example.com]
          condition: { title: t, expression: "true" }
`,
      ),
    );
    expect(world.projects?.p?.number).toBe("42");
    expect(world.restorePlans?.[0]?.policy?.version).toBe(3);
  });

  it.each([
    [
      "bad member",
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n    policy: { " +
        "bindings: [ { role: roles/x, members: [bob@example.com] } ] }\n",
      /bob@example\.com/,
    ],
    [
      "bad role",
      "endpoints:\n  - name: projects/p/locations/l/endpoints/e\n    policy: { " +
        "bindings: [ { role: owner, members: [user:a@b.co] } ] }\n",
      /role "owner"/,
    ],
    ["bad name", "endpoints:\n  - name: projects/p/endpoints/e\n", /endpoints\[0\]\.name .*is not an endpoint name/],
    [
      "duplicate",
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n  - " +
        "name: projects/p/locations/l/restorePlans/r\n",
      /declared twice/,
    ],
    [
      "duplicate via number",
      "projects: { p: { number: '7' } }\nrestorePlans:\n  - name: " +
        "projects/p/locations/l/restorePlans/r\n  - name: projects/7/locations/l/restorePlans/r\n",
      /declared twice/,
    ],
    ["shared number", "projects: { a: { number: '7' }, b: { number: '7' } }\n", /both declare number 7/],
    [
      "unknown field",
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n    owner: me\n",
      /unknown property "owner"/,
    ],
    [
      "bad enum",
      "federations:\n  - name: projects/p/locations/l/federations/f\n    state: RUNNING\n",
      /state must be one of .*ACTIVE/,
    ],
    [
      "conditional v1",
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n    policy: { version: 1, bindings: " +
        "[ { role: roles/x, members: [user:a@b.co], condition: { title: t, expression: 'true' } } ] }\n",
      /require policy version 3/,
    ],
    ["not a mapping", "- a\n", /expected a mapping/],
    ["YAML syntax", "restorePlans: [\n", /invalid YAML.*line/],
  ])("refuses %s with the file name and the problem", async (_label, text, pattern) => {
    const file = await seedFile("seed.yaml", text);
    let message = "";
    try {
      loadSeedFile(file);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`seed file ${file}: `);
    expect(message).toMatch(pattern);
    expect(message).not.toContain("\n");
  });

  it.each([
    ["YAML syntax", "projects: {}\nrestorePlans: [\n", 3, "emulator seed: invalid YAML: "],
    [
      "a wrong type",
      "projects:\n  p:\n    number: '1'\nrestorePlans:\n  - name: " +
        "projects/p/locations/l/restorePlans/r\n    policy:\n      bindings: { role: x }\n",
      7,
      "emulator seed: restorePlans[0].policy.bindings must be array",
    ],
    [
      "a bad name",
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n  - name: nightly\n",
      3,
      'emulator seed: restorePlans[1].name "nightly" is not a restorePlan name',
    ],
    [
      "a shared number",
      "projects:\n  a: { number: '7' }\n  b: { number: '7' }\n",
      3,
      "emulator seed: projects a and b both declare number 7",
    ],
  ])("a seed with %s is a WorldError positioned at its line (issue 12)", async (_what, text, line, problem) => {
    const file = await seedFile("seed.yaml", text);
    let err: unknown;
    try {
      loadSeedFile(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WorldError);
    const w = err as WorldError;
    expect(w.position).toMatchObject({ file, line });
    expect(w.position.column).toBeGreaterThan(0);
    expect(w.problem.startsWith(problem)).toBe(true);
    expect(w.message).toContain(`seed file ${file}: `);
  });

  it("refuses a missing file clearly", () => {
    expect(() => loadSeedFile(join(dir, "nope.yaml"))).toThrow(/seed file .*nope\.yaml: no such file/);
  });
});

describe("startEmulator with a seed file", () => {
  it("serves the seed and rejects an invalid one", async () => {
    const emu = await startEmulator({ seedFile: await seedFile("seed.yaml", SPEC_SEED) });
    try {
      const r = await api(emu.url).getRestorePlan("projects/my-project/locations/us-central1/restorePlans/nightly", 3, {
        Authorization: "Bearer admin-token",
      });
      expect(r.json.bindings[0].members).toEqual(["user:carol@example.com"]);
    } finally {
      await emu.close();
    }
    await expect(startEmulator({ seedFile: await seedFile("bad.yaml", "projects: 3\n") })).rejects.toThrow(
      /seed file .*bad\.yaml/,
    );
    await expect(startEmulator({ seed: { restorePlans: [{ name: "x" }] } })).rejects.toThrow(
      /^seed: restorePlans\[0\]\.name/,
    );
  });
});
