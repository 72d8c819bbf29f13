// The seal of a saved plan (digest over the canonical content, HMAC signature with a key) and the
// comparison of a saved plan with a fresh one, on plans made by the real planner over a fake cloud.
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSavedPlan } from "../../src/cli/commands/saved-plan-file.js";
import { isLintDiagnostic } from "../../src/config/lint.js";
import type { Plan, Policy } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { planDifferences } from "../../src/plan/plan-differences.js";
import { canonicalJson } from "../../src/base/canonical-json.js";
import { planKey, savePlan, sealPlan, verifySeal } from "../../src/plan/saved-plan.js";
import {
  BINDING,
  bindingState,
  fakeCloud,
  makeState,
  planOptions,
  RP,
  STACK_HEAD,
  stackOf,
} from "../fixtures/builders.js";

const STACK = stackOf(`${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:bob@example.com, user:alice@example.com]
`);

const live = (viewers: string[], etag: string, extra: Policy["bindings"] = []): Policy => ({
  version: 1,
  etag,
  bindings: [...(extra ?? []), { role: "roles/gkebackup.viewer", members: viewers }],
});

/** The canonical content, computed independently of the module under test. */
const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
        )
      : v;

async function planWith(policy: Policy, at = "2026-01-01T00:00:00Z"): Promise<Plan> {
  const { port } = fakeCloud({ policies: { [RP]: policy } });
  return (await plan(STACK, undefined, port, planOptions({ now: () => new Date(at) }))).plan;
}

describe("sealPlan / verifySeal", () => {
  it("the digest is sha256 over the plan without its seal, keys sorted, no white space", async () => {
    const p = await planWith(live(["user:alice@example.com"], "AAA="));
    const sealed = sealPlan(p, undefined);
    const expected = createHash("sha256")
      .update(JSON.stringify(sortKeys(p)))
      .digest("hex");
    expect(sealed.digest).toBe(`sha256:${expected}`);
    expect(sealed.signature).toBeUndefined();
    expect(canonicalJson({ b: [1, { d: null, c: "x" }], a: undefined })).toBe('{"b":[1,{"c":"x","d":null}]}');
    // A round trip through the file format keeps it valid; any edit breaks it.
    const reread = JSON.parse(JSON.stringify(sealed, null, 2)) as Plan;
    expect(verifySeal(reread, undefined)).toEqual({});
    reread.options.destroy = true;
    expect(verifySeal(reread, undefined)).toEqual({ problem: "digest-mismatch" });
    expect(verifySeal(p, undefined)).toEqual({ problem: "no-digest" });
  });

  it(
    "the signature is HMAC-SHA256 of the same bytes; it is checked " + "only with a key, and never holds the key",
    async () => {
      const p = await planWith(live(["user:alice@example.com"], "AAA="));
      const key = "k-0123456789";
      const signed = sealPlan(p, key);
      const content = JSON.stringify(sortKeys(p));
      expect(signed.signature).toBe(`hmac-sha256:${createHmac("sha256", key).update(content).digest("hex")}`);
      expect(JSON.stringify(signed)).not.toContain(key);
      expect(verifySeal(signed, key)).toEqual({});
      expect(verifySeal(signed, "other")).toEqual({ problem: "signature-mismatch" });
      expect(verifySeal(signed, undefined)).toEqual({ unchecked: true });
      expect(verifySeal(sealPlan(p, undefined), key)).toEqual({ problem: "no-signature" });
      // Re-sealing without the key cannot keep a valid signature.
      const forged = { ...sealPlan({ ...signed, applyable: false }, undefined), signature: signed.signature! };
      expect(verifySeal(forged, key)).toEqual({ problem: "signature-mismatch" });
      expect(planKey({ CONVERGE_PLAN_KEY: "" })).toBeUndefined();
      expect(planKey({ CONVERGE_PLAN_KEY: key })).toBe(key);
    },
  );
});

describe("planDifferences", () => {
  it("ignores the timestamp, etags, member order and case, and unrelated bindings", async () => {
    const saved = await planWith(live(["user:alice@example.com"], "AAA="));
    const fresh = await planWith(
      live(["user:Alice@example.com"], "BBB=", [
        { role: "roles/gkebackup.operator", members: ["user:dave@example.com"] },
      ]),
      "2026-02-01T00:00:00Z",
    );
    expect(fresh.timestamp).not.toBe(saved.timestamp);
    expect(planDifferences(saved, fresh)).toEqual([]);
    expect(planDifferences(saved, { ...saved, resource_changes: [...saved.resource_changes].reverse() })).toEqual([]);
  });

  it("names a grant a fresh plan would revoke, and a change the saved plan lacks", async () => {
    const saved = await planWith(live(["user:alice@example.com"], "AAA="));
    const fresh = await planWith(live(["user:alice@example.com", "user:carol@example.com"], "BBB="));
    expect(planDifferences(saved, fresh)).toEqual([
      `viewers: a fresh plan would revoke user:carol@example.com ` +
        `roles/gkebackup.viewer on ${RP}; the saved plan does not`,
    ]);
    expect(
      planDifferences({ ...saved, resource_changes: [], access_changes: { changes: [], incomplete: [] } }, saved),
    ).toEqual([
      "viewers: a fresh plan would create it; the saved plan has no change for it",
      `viewers: a fresh plan would grant user:bob@example.com roles/gkebackup.viewer on ${RP}; the saved plan does not`,
    ]);
  });

  it(
    "names a change whose grant the saved plan says was made outside converge " +
      "(left in place, or adopted) and a fresh plan does not",
    async () => {
      // Found by the hostile-input fuzzer: an edited plan (digest recomputed) that shows a delete as
      // "the grant stays in place" passed, while apply revokes the grant.
      const prior = makeState("t", [
        bindingState("old", { name: RP, role: "roles/gkebackup.admin", members: ["user:zed@example.com"] }, "AAA="),
      ]);
      const policy = live(["user:alice@example.com"], "AAA=", [
        { role: "roles/gkebackup.admin", members: ["user:zed@example.com"] },
      ]);
      const fresh = (await plan(STACK, prior, fakeCloud({ policies: { [RP]: policy } }).port, planOptions())).plan;
      const old = structuredClone(fresh);
      old.resource_changes.find((c) => c.address === "old")!.before_adopted = true;
      expect(planDifferences(old, fresh)).toEqual([
        "old: the saved plan leaves the grant before the change in place (granted outside " +
          "converge before it was adopted), a fresh plan does not",
      ]);
      const viewers = structuredClone(fresh);
      viewers.resource_changes.find((c) => c.address === "viewers")!.after_adopted = true;
      expect(planDifferences(viewers, fresh)).toEqual([
        "viewers: the saved plan adopts the grant after the change (already " +
          "granted outside converge), a fresh plan does not",
      ]);
      expect(planDifferences(fresh, viewers)).toEqual([
        "viewers: the saved plan does not adopt the grant after the change, a fresh plan does",
      ]);
    },
  );
});

/** Runs `fn` in a fresh temp directory, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "converge-saved-plan-"));
  try {
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sealedPlan = async (key?: string) => sealPlan(await planWith(live(["user:alice@example.com"], "AAA=")), key);

describe("savePlan", () => {
  it("writes the sealed plan atomically (mode 0600, no temp file left) and keeps diagnostic codes", () =>
    inTempDir(async (dir) => {
      const p = await planWith(live(["user:alice@example.com"], "AAA="));
      p.diagnostics = [
        { severity: "warning", code: "lint/basic-role", summary: "grant: roles/owner is a basic role" },
        { severity: "warning", summary: "quoted", detail: "[lint: basic-role]" },
      ];
      const file = join(dir, "sub", "plan.json");
      savePlan(file, sealPlan(p, undefined));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(dir, "sub"))).toEqual(["plan.json"]);
      const back = readSavedPlan(file, undefined);
      expect(back.diagnostics.map(isLintDiagnostic)).toEqual([true, false]);
      expect(back.diagnostics[0]!.code).toBe("lint/basic-role");
    }));

  it("reads back a saved plan larger than 256 MiB (a plan of 100,000 changes is about that size)", () =>
    inTempDir(async (dir) => {
      const sealed = await sealedPlan();
      const file = join(dir, "plan.json");
      // White space after the plan keeps the same JSON, and the seal covers the content, not the bytes.
      writeFileSync(file, JSON.stringify(sealed, null, 2) + " ".repeat(260 * 1024 * 1024) + "\n");
      expect(readSavedPlan(file, undefined).digest).toBe(sealed.digest);
    }));

  it(
    "writes the text of JSON.stringify(plan, null, 2), its unsafe " +
      "characters escaped, and reads it back as the same plan",
    () =>
      inTempDir(async (dir) => {
        const p = await planWith(live(["user:alice@example.com"], "AAA="));
        p.diagnostics = Array.from({ length: 300 }, (_, i) => ({
          severity: "warning" as const,
          summary: `w${i} \u202e\u2028`,
          detail: "x".repeat(i * 50),
        }));
        const sealed = sealPlan(p, "k");
        const file = join(dir, "plan.json");
        savePlan(file, sealed);
        const text = readFileSync(file, "utf8");
        expect(text).toBe(
          JSON.stringify(sealed, null, 2).replaceAll("\u202e", "\\u202e").replaceAll("\u2028", "\\u2028") + "\n",
        );
        expect(readSavedPlan(file, "k")).toEqual(sealed);
      }),
  );

  it("refuses to save a plan larger than apply can read back, and leaves no file", () =>
    inTempDir(async (dir) => {
      const sealed = await sealedPlan();
      const file = join(dir, "plan.json");
      const size = Buffer.byteLength(JSON.stringify(sealed, null, 2) + "\n");
      expect(() => savePlan(file, sealed, { maxBytes: size - 1 })).toThrow(/too large to save/);
      expect(readdirSync(dir)).toEqual([]);
      savePlan(file, sealed, { maxBytes: size });
      expect(readSavedPlan(file, undefined)).toEqual(sealed);
    }));
});
