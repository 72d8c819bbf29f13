// `converge query --project NUMBER` (needs `npm run build`): Google names a project by its number or
// its ID, and converge names objects by the ID. Given a number, query asks Resource Manager for the
// ID first, so it lists the same objects under the names the stack uses, and marks its managed grants.
import { join } from "node:path";
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";

const ROLE = "roles/gkebackup.viewer";
const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [
      { name: rp("nightly"), policy: { bindings: [{ role: ROLE, members: ["user:alice@example.com"] }] } },
    ],
  },
  "converge-query-number-",
);

interface QueryDoc {
  project: string;
  objects: { name: string; grants: { member: string; managed_by: string[] }[] }[];
}

describe("query --project NUMBER", { timeout: 180_000 }, () => {
  it("lists the objects under the project's ID and marks the grants the stack manages", async () => {
    const file = join(ws.dir, "s.yaml");
    await writeFile(file, stackHead("s") + bindingYaml("viewers", rp("nightly"), ROLE, ["user:alice@example.com"]));
    const opts = { cwd: ws.dir, emulator: ws.emu, timeoutMs: 120_000 };
    expectExit(await runCli(["apply", "--auto-approve", "-f", file], opts), 0);
    const r = await runCli(
      ["query", "--project", "123456789012", "--location", "us-central1", "--json", "-f", file],
      opts,
    );
    expectExit(r, 0);
    const doc = JSON.parse(r.stdout) as QueryDoc;
    expect(doc.project).toBe("my-project");
    expect(doc.objects.map((o) => o.name)).toEqual([rp("nightly")]);
    expect(doc.objects[0]!.grants).toEqual([
      expect.objectContaining({ member: "user:alice@example.com", managed_by: ["viewers"] }),
    ]);
  });

  it("names a number Resource Manager does not know, and lists nothing", async () => {
    const r = await runCli(["query", "--project", "999999999999", "--location", "us-central1"], {
      cwd: ws.dir,
      emulator: ws.emu,
      timeoutMs: 120_000,
    });
    expectExit(r, 1);
    expect(r.stderr).toContain("cannot find the project ID of project number 999999999999");
  });
});
