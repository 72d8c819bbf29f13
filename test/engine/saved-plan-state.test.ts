// What identifies a state for a saved plan (src/state/factory.ts openStateStore's `identity`) and
// the check `apply FILE` makes with it (src/engine/saved-plan-checks.ts checkSameState). No I/O:
// opening a store only names it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { checkSameState } from "../../src/engine/saved-plan-checks.js";
import type { Plan } from "../../src/generated/schemas.js";
import { openStateStore, type StateIdentity } from "../../src/state/factory.js";

const dir = mkdtempSync(join(tmpdir(), "converge-plan-identity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stackFile = join(dir, "stack.yaml");

const planFor = (backend: StateIdentity | undefined) => ({ backend }) as unknown as Plan;
const refusal = (plan: Plan, current: StateIdentity): string => {
  try {
    checkSameState(plan, "p.plan", current);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as UserError).diagnostics.map((d) => `${d.summary}\n${d.detail ?? ""}`).join("\n");
  }
  return "";
};

describe("a state's identity", () => {
  it("local: the type, the workspace and the state file relative to the stack file's directory", () => {
    expect(openStateStore({ stackFile, stackName: "app", workspace: "default" }).identity).toEqual({
      type: "local",
      workspace: "default",
      path: "state/app.json",
    });
    expect(openStateStore({ stackFile, stackName: "app", workspace: "dev" }).identity).toEqual({
      type: "local",
      workspace: "dev",
      path: "state/app.dev.json",
    });
    expect(
      openStateStore({ stackFile, stackName: "app", workspace: "dev", state: join(dir, "elsewhere", "x.json") })
        .identity,
    ).toEqual({ type: "local", workspace: "dev", path: "elsewhere/x.dev.json" });
  });

  it("postgres: the type, the workspace and the schema; nothing of the connection", () => {
    const id = openStateStore({
      stackFile,
      stackName: "app",
      workspace: "dev",
      backend: { type: "postgres", schema: "team_a" },
    }).identity;
    expect(id).toEqual({ type: "postgres", workspace: "dev", schema: "team_a" });
    expect(openStateStore({ stackFile, stackName: "app", workspace: "dev", backendType: "postgres" }).identity).toEqual(
      { type: "postgres", workspace: "dev", schema: "converge" },
    );
  });
});

describe("checkSameState", () => {
  const local: StateIdentity = { type: "local", workspace: "dev", path: "state/app.dev.json" };
  const pg: StateIdentity = { type: "postgres", workspace: "dev", schema: "converge" };

  it("accepts the state the plan was made from", () => {
    expect(refusal(planFor(local), { ...local })).toBe("");
    expect(refusal(planFor(pg), { ...pg })).toBe("");
  });

  it("refuses another workspace, file, schema or backend, naming both", () => {
    expect(refusal(planFor(local), { ...local, workspace: "staging", path: "state/app.staging.json" })).toMatch(
      new RegExp(
        String.raw`made for workspace "dev" \(local state file state\/app\.dev\.json\), but apply would use w` +
          String.raw`orkspace "staging" \(local state file state\/app\.staging\.json\)`,
      ),
    );
    expect(refusal(planFor(local), { ...local, path: "other/app.dev.json" })).toMatch(
      /local state file other\/app\.dev\.json/,
    );
    expect(refusal(planFor(pg), { ...pg, schema: "team_b" })).toMatch(
      /\(PostgreSQL schema converge\), but apply would use workspace "dev" \(PostgreSQL schema team_b\)/,
    );
    expect(refusal(planFor(pg), local)).toMatch(/PostgreSQL schema converge.*local state file state\/app\.dev\.json/);
  });

  it("refuses a plan that does not record its state (an older converge's): plan again", () => {
    expect(refusal(planFor(undefined), local)).toMatch(
      /does not say which state it was made from: it was made by an older converge[\s\S]*converge plan --out FILE/,
    );
  });
});
