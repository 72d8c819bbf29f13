// One hostile stack through what `converge apply` does, in-process: load the file, plan it over
// a cloud of functions that records every call, and only when nothing is wrong (as the CLI
// decides: the plan is not errored) apply it over the same cloud. What comes back says how far
// it went, how many writes the cloud saw, and what broke the rules: an error diagnostic without
// file:line:column, a plan whose `errored` disagrees with its error diagnostics (the CLI would
// apply a stack with errors), a stack name whose state file would land outside `state/`.
import { writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { apply } from "../../src/apply/executor.js";
import { loadStackFile } from "../../src/config/load.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { Policy, State } from "../../src/generated/schemas.js";
import { applyModifications } from "../../src/iam/policy.js";
import { plan } from "../../src/plan/planner.js";
import { defaultStatePath, newState } from "../../src/state/format.js";
import { planOptions, type FakeWorld } from "../fixtures/builders.js";
import { fuzzWorld } from "./hostile-stack-cases.js";

export interface StackOutcome {
  /** rejected: did not load; errored: the plan has errors; clean: neither (then applied if it had changes). */
  kind: "rejected" | "errored" | "clean";
  applied: boolean;
  /** modifyPolicy calls the cloud received (load, plan and apply). */
  writes: number;
  /** Error diagnostics without a position in the stack file. */
  unpositioned: string[];
  /** Broken rules other than positions. */
  escapes: string[];
}

const NOW = new Date("2026-01-01T00:00:00Z");
/** SPEC: the stack name also names the state file. */
const STACK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A CloudPort over `world` that records every call; modifyPolicy edits the world. */
export function recordingCloud(world: FakeWorld): { port: CloudPort; writes: () => number } {
  let writes = 0;
  let etag = 100;
  const policies = world.policies ?? {};
  const port: CloudPort = {
    getIamPolicy: async (_kind, name) => (policies[name] ? structuredClone(policies[name]) : undefined),
    getFederation: async (name) => {
      const f = world.federations?.[name];
      if (!f) throw Object.assign(new Error(`Federation ${name} not found.`), { status: "NOT_FOUND" });
      return structuredClone(f);
    },
    modifyPolicy: async (_kind, name, mods) => {
      writes++;
      const current: Policy | undefined = policies[name];
      if (!current) throw Object.assign(new Error(`Resource '${name}' was not found.`), { status: "NOT_FOUND" });
      const { policy } = applyModifications(current, mods);
      policy.etag = `e${++etag}`;
      policies[name] = policy;
      return { policy: structuredClone(policy), written: true, attempts: 1 };
    },
  };
  return { port, writes: () => writes };
}

/** Error diagnostics that do not point into `file` (file, line ≥ 1, column ≥ 1, a line the text has). */
function unpositioned(diags: readonly Diagnostic[], file: string, lines: number): string[] {
  return diags
    .filter((d) => d.severity === "error")
    .filter(
      (d) =>
        !(
          d.file === file &&
          Number.isInteger(d.line) &&
          Number.isInteger(d.column) &&
          d.line! >= 1 &&
          d.column! >= 1 &&
          d.line! <= lines + 1
        ),
    )
    .map(
      (d) =>
        `error without a position in the stack (file ${d.file}, line ${d.line}, ` +
        `column ${d.column}): ${d.summary.slice(0, 300)}`,
    );
}

/** Writes `bytes` as the stack file at `path` and runs it through load → plan → apply. */
export async function runStackCase(
  path: string,
  bytes: Uint8Array,
  world: FakeWorld = fuzzWorld(),
): Promise<StackOutcome> {
  writeFileSync(path, bytes);
  const file = resolve(path);
  const lines = new TextDecoder().decode(bytes).split(/\r\n|\r|\n/).length;
  const cloud = recordingCloud(world);
  const load = loadStackFile(path, { now: NOW });
  const escapes: string[] = [];
  if (!load.stack) {
    if (!load.diagnostics.some((d) => d.severity === "error")) escapes.push("refused without an error diagnostic");
    return {
      kind: "rejected",
      applied: false,
      writes: cloud.writes(),
      unpositioned: unpositioned(load.diagnostics, file, lines),
      escapes,
    };
  }
  const stack = load.stack;
  const statePath = resolve(defaultStatePath(dirname(file), stack.name));
  if (
    !STACK_NAME.test(stack.name) ||
    !statePath.startsWith(join(dirname(file), "state") + sep) ||
    dirname(statePath) !== join(dirname(file), "state")
  ) {
    escapes.push(`the stack name ${JSON.stringify(stack.name.slice(0, 100))} puts the state at ${statePath}`);
  }
  const result = await plan(stack, undefined, cloud.port, planOptions({ now: () => NOW }));
  const errors = [...load.diagnostics, ...result.diagnostics].filter((d) => d.severity === "error");
  if (result.plan.errored !== errors.length > 0)
    escapes.push(`plan.errored is ${result.plan.errored} with ${errors.length} error diagnostics`);
  const planned = { unpositioned: unpositioned([...load.diagnostics, ...result.diagnostics], file, lines), escapes };
  if (cloud.writes()) escapes.push(`${cloud.writes()} writes while loading and planning`);
  // As the CLI: an errored plan stops here.
  if (result.plan.errored) return { kind: "errored", applied: false, writes: cloud.writes(), ...planned };
  // Names every object inherits behave like any other name: each resource and output is there, as its own key.
  for (const name of stack.resources.keys())
    if (!result.plan.resource_changes.some((c) => c.address === name))
      escapes.push(`resource ${JSON.stringify(name)} has no change in the plan`);
  for (const name of stack.outputs.keys())
    if (!Object.hasOwn(result.plan.output_changes, name))
      escapes.push(`output ${JSON.stringify(name)} is missing from the plan`);
  if (!result.plan.applyable) return { kind: "clean", applied: false, writes: cloud.writes(), ...planned };
  const state: State = newState(stack.name);
  const applied = await apply(result.plan, {
    cloud: cloud.port,
    state,
    save: async (s) => ({ ...structuredClone(s), serial: s.serial + 1 }),
    parallelism: 4,
    live: result.live,
  });
  if (!applied.failed.length) {
    for (const name of stack.outputs.keys())
      if (!Object.hasOwn(applied.state.outputs, name))
        escapes.push(`output ${JSON.stringify(name)} is missing from the state after apply`);
  }
  return { kind: "clean", applied: true, writes: cloud.writes(), ...planned };
}
