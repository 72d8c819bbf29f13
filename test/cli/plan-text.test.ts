// The plain plan renderer (Terraform's layout), checked by its key lines on plans made by the
// real planner: symbols, line-by-line member diffs, # forces replacement, (known after apply),
// the drift section, the summary and outputs.
import { describe, expect, it } from "vitest";
import { toAnsi, toPlain } from "../../src/diagnostics/lines.js";
import { planLines, summaryText } from "../../src/cli/render/plan-text.js";
import { deferredReadPlan, mixedPlan, noChangesPlan, quickstartPlan } from "./plans.js";

const plain = async (p: Promise<Parameters<typeof planLines>[0]>) => toPlain(planLines(await p)).split("\n");

/** The lines from the one starting with `start` up to the closing brace of that block. */
function block(lines: string[], start: string): string[] {
  const i = lines.findIndex((l) => l.startsWith(start));
  if (i < 0) throw new Error(`no line starts with ${JSON.stringify(start)}:\n${lines.join("\n")}`);
  const end = lines.findIndex((l, j) => j > i && l === "    }");
  return lines.slice(i, end + 1);
}

describe("creates (the quickstart)", () => {
  it("shows each resource as created with its attributes and the summary", async () => {
    const lines = await plain(quickstartPlan());
    expect(lines).toContain("   + create");
    expect(block(lines, "  # restoreViewers will be created")).toEqual([
      "  # restoreViewers will be created",
      '  + resource "cloudnative:backup/v1:RestorePlanIamBinding" "restoreViewers" {',
      "      + etag    = (known after apply)",
      '      + id      = "projects/my-project/locations/us-central1/restorePlans/nightly roles/gkebackup.viewer"',
      "      + members = [",
      '          + "group:sre@example.com",',
      '          + "user:alice@example.com",',
      "        ]",
      '      + name    = "projects/my-project/locations/us-central1/restorePlans/nightly"',
      '      + project = "my-project"',
      '      + role    = "roles/gkebackup.viewer"',
      '      - "user:carol@example.com"  # granted outside converge, will be revoked',
      "    }",
    ]);
    expect(block(lines, "  # restoreAdmins will be created")).toEqual(
      expect.arrayContaining([
        "      + condition = {",
        '          + title       = "until-2027"',
        '          + description = "Temporary on-call access"',
        "        }",
      ]),
    );
    expect(lines).toContain('      + member  = "serviceAccount:data-eng@my-project.iam.gserviceaccount.com"');
    expect(lines).toContain("Plan: 0 to import, 3 to add, 0 to change, 0 to destroy.");
    expect(lines).toContain("Changes to Outputs:");
    expect(lines).toContain('  + lakeEndpoint = "thrift://10.0.0.7:9083"');
  });

  it("has no trailing white space and no ANSI codes", async () => {
    for (const l of await plain(quickstartPlan())) {
      expect(l).not.toMatch(/\s$/);
      expect(l).not.toMatch(/\u001b/);
    }
  });

  it(
    "a plan of thousands of lines (made in groups) has every " + "block once, in order, then the summary once",
    async () => {
      const base = await quickstartPlan();
      const copies = 700; // 3 resources a copy, over 13 lines each: several groups of lines
      const resource_changes = Array.from({ length: copies }, (_, i) =>
        base.resource_changes.map((c) => ({ ...c, address: `${c.address}_${i}`, name: `${c.name}_${i}` })),
      ).flat();
      const big = { ...base, resource_changes };
      const lines = toPlain(planLines(big)).split("\n");
      const headers = lines.filter((l) => / will be created$/.test(l));
      expect(headers).toEqual(
        resource_changes.filter((c) => c.change.action === "create").map((c) => `  # ${c.address} will be created`),
      );
      expect(lines.length).toBeGreaterThan(3 * 4096);
      // Each copy's block is the first copy's with its own name.
      const first = block(lines, "  # restoreViewers_0 will be created").join("\n");
      for (const i of [1, 315, 316, 699])
        expect(block(lines, `  # restoreViewers_${i} will be created`).join("\n")).toBe(
          first.replaceAll("restoreViewers_0", `restoreViewers_${i}`),
        );
      expect(lines.filter((l) => l.startsWith("Plan: "))).toHaveLength(1);
      expect(lines.findIndex((l) => l.startsWith("Plan: "))).toBeGreaterThan(lines.lastIndexOf(headers.at(-1)!));
    },
  );

  it("colours the same characters in ANSI mode", async () => {
    const lines = planLines(await quickstartPlan());
    expect(toAnsi(lines).replace(/\u001b\[\d+m/g, "")).toBe(toPlain(lines));
    expect(toAnsi(lines)).toContain("\u001b[32m  +\u001b[39m");
  });
});

describe("updates, replacements and deletes (with drift)", () => {
  it("lists the drift section first, with what changed outside converge", async () => {
    const lines = await plain(mixedPlan());
    expect(lines[0]).toBe("Objects have changed outside of converge");
    expect(block(lines, "  # admins has changed")).toEqual([
      "  # admins has changed",
      '  ~ resource "cloudnative:backup/v1:RestorePlanIamBinding" "admins" {',
      "      ~ members = [",
      '            "user:a@x.com",',
      '          + "user:b@x.com",',
      "        ]",
      "        # (5 unchanged attributes hidden)",
      "    }",
    ]);
    expect(lines).toContain("  # invoker has been deleted");
    const driftEnd = lines.indexOf(
      "Unless you have made equivalent changes to your stack, the actions below will undo or respond to these changes.",
    );
    expect(driftEnd).toBeGreaterThan(0);
    expect(driftEnd).toBeLessThan(lines.indexOf("  # viewers will be updated in-place"));
  });

  it("diffs a members list line by line on an in-place update", async () => {
    const lines = await plain(mixedPlan());
    expect(block(lines, "  # viewers will be updated in-place")).toEqual([
      "  # viewers will be updated in-place",
      '  ~ resource "cloudnative:backup/v1:RestorePlanIamBinding" "viewers" {',
      '      ~ etag    = "E1" -> (known after apply)',
      "      ~ members = [",
      '            "user:keep@x.com",',
      '          - "user:old@x.com",',
      '          + "user:new@x.com",',
      "        ]",
      "        # (4 unchanged attributes hidden)",
      "    }",
    ]);
  });

  it("marks a replacement with +/- and the attribute that forces it", async () => {
    const lines = await plain(mixedPlan());
    const b = block(lines, "  # admins must be replaced");
    expect(b[1]).toBe('+/- resource "cloudnative:backup/v1:RestorePlanIamBinding" "admins" {');
    expect(b).toContain(
      '      ~ role    = "roles/gkebackup.backupAdmin" -> "roles/gkebackup.admin" # forces replacement',
    );
    expect(b.filter((l) => l.includes("# forces replacement"))).toHaveLength(1);
    expect(lines).toContain(" +/- create replacement and then destroy");
  });

  it("explains a re-create and a delete, and counts them all", async () => {
    const lines = await plain(mixedPlan());
    const create = block(lines, "  # invoker will be created");
    expect(create[1]).toBe("  # (it was deleted outside of converge)");
    const del = block(lines, "  # gone will be destroyed");
    expect(del[1]).toBe("  # (because it is no longer in the stack)");
    expect(del).toContain('      - role    = "roles/gkebackup.restoreUser" -> null');
    expect(del).toContain('          - "user:z@x.com",');
    expect(lines).toContain("Plan: 0 to import, 2 to add, 1 to change, 2 to destroy.");
    expect(summaryText(await mixedPlan())).toBe("Plan: 0 to import, 2 to add, 1 to change, 2 to destroy.");
    expect(lines).toEqual(
      expect.arrayContaining([
        "   + create",
        "   ~ update in-place",
        " +/- create replacement and then destroy",
        "   - destroy",
      ]),
    );
  });
});

describe("deferred reads", () => {
  it("shows <= read with all attributes known after apply, and unknown member values", async () => {
    const lines = await plain(deferredReadPlan());
    expect(block(lines, "  # lake will be read during apply")).toEqual([
      "  # lake will be read during apply",
      "  # (its arguments depend on values known only after apply)",
      ' <= data "cloudnative:metastore/v1alpha:getFederation" "lake" {',
      "      # (all attributes known after apply)",
      "    }",
    ]);
    expect(lines).toContain("  <= read (data resources)");
    const invoker = block(lines, "  # invoker will be created");
    expect(invoker).toContain("      + member  = (known after apply)");
    expect(invoker).toContain("      + id      = (known after apply)");
    expect(lines).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
  });
});

describe("no changes", () => {
  it("says so and prints no summary line", async () => {
    const lines = await plain(noChangesPlan());
    expect(lines[0]).toBe("No changes. Your access policies match the stack.");
    expect(lines.some((l) => l.startsWith("Plan:"))).toBe(false);
    expect(lines.some((l) => l.includes("Objects have changed"))).toBe(false);
  });

  it("shows unchanged resources only with details", async () => {
    const lines = toPlain(planLines(await noChangesPlan(), { details: true })).split("\n");
    expect(lines).toContain("  # viewers is unchanged");
    expect(lines).toContain("Plan: 0 to import, 0 to add, 0 to change, 0 to destroy.");
  });
});

describe("revocations in a resource's block (issue 13)", () => {
  it("a replacement onto another object shows what it revokes on the old one", async () => {
    const { plan } = await import("../../src/plan/planner.js");
    const { BINDING, bindingState, fakeCloud, makeState, planOptions, rpName, STACK_HEAD, stackOf } =
      await import("../fixtures/builders.js");
    const stack =
      `${STACK_HEAD}resources:\n  viewers:\n    type: ${BINDING}\n    properties:\n      name: ` +
      `${rpName("y")}\n      role: roles/gkebackup.viewer\n      members: [user:alice@example.com]\n`;
    const state = makeState("t", [
      bindingState(
        "viewers",
        { name: rpName("x"), role: "roles/gkebackup.viewer", members: ["user:alice@example.com"] },
        "E1",
      ),
    ]);
    const cloud = fakeCloud({
      policies: {
        [rpName("x")]: {
          version: 1,
          etag: "E1",
          bindings: [{ role: "roles/gkebackup.viewer", members: ["user:alice@example.com", "user:bob@example.com"] }],
        },
        [rpName("y")]: { version: 1, etag: "E2", bindings: [] },
      },
    });
    const p = (await plan(stackOf(stack), state, cloud.port, planOptions())).plan;
    const lines = block(toPlain(planLines(p)).split("\n"), "  # viewers must be replaced");
    // alice moves: her grant on the old object is revoked, which the diff itself does not show;
    // bob (added outside converge, seen as drift) is already in the members diff as removed.
    expect(lines).toContain(
      `      - "user:alice@example.com"  # roles/gkebackup.viewer on ${rpName("x")}: will be revoked`,
    );
    expect(lines).toContain('          - "user:bob@example.com",');
    expect(lines.filter((l) => l.includes("bob"))).toHaveLength(1);
  });
});
