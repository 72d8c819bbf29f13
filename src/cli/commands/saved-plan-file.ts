// The checks `apply FILE` makes before it trusts a saved plan with anything: it is a converge
// plan, its digest (and with CONVERGE_PLAN_KEY its signature) matches, it was made for the loaded
// stack from the current state, and a fresh plan makes the same grant changes. Each failure is a
// user error that says nothing was applied; none of them prints the key.
import { readFileSync } from "node:fs";
import { UserError, warning } from "../../diagnostics/diagnostic.js";
import type { Plan, State } from "../../generated/schemas.js";
import { planDifferences } from "../../plan/plan-differences.js";
import { PLAN_KEY_ENV, verifySeal } from "../../plan/saved-plan.js";
import { describeErrors, validate } from "../../schemas/index.js";
import { printDiagnostics } from "../common.js";

const AGAIN = "Nothing was applied. Run `converge plan --out FILE` again and review it.";
/** Differences listed in full; the rest are counted. */
const SHOWN_DIFFERENCES = 50;

function refuse(summary: string, detail: string): never {
  throw new UserError({ severity: "error", summary, detail });
}

/** Reads and checks the plan file itself: JSON, the plan schema, the seal, no errors. */
export function readSavedPlan(file: string, key: string | undefined): Plan {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    refuse(`cannot read the saved plan ${file}: ${(e as Error).message}`, "Nothing was applied.");
  }
  const errors = validate("plan.schema.json", data);
  if (errors.length) throw new UserError({ severity: "error", summary: `${file} is not a converge plan`, detail: describeErrors(errors.slice(0, 5)) });
  const plan = data as Plan;
  const seal = verifySeal(plan, key);
  switch (seal.problem) {
    case "no-digest":
      refuse(`the saved plan ${file} has no digest`, `Only plans saved by \`converge plan --out\` can be applied. ${AGAIN}`);
    case "digest-mismatch":
      refuse(`the saved plan ${file} does not match its digest: it was changed after it was saved`, AGAIN);
    case "no-signature":
      refuse(`the saved plan ${file} is not signed, and ${PLAN_KEY_ENV} is set`, `With ${PLAN_KEY_ENV} set, only plans saved by \`converge plan --out\` with the same key can be applied. ${AGAIN}`);
    case "signature-mismatch":
      refuse(`the saved plan ${file} has a signature that does not match ${PLAN_KEY_ENV}`, `It was signed with another key, or changed after it was saved. ${AGAIN}`);
    default:
  }
  if (seal.unchecked) printDiagnostics([warning(`the saved plan ${file} is signed, but ${PLAN_KEY_ENV} is not set: its signature was not checked`)]);
  if (plan.errored) refuse(`the saved plan ${file} has errors and cannot be applied`, AGAIN);
  return plan;
}

/** The plan was made for the stack that `-f` loads. */
export function checkStackName(plan: Plan, file: string, stackName: string, stackFile: string): void {
  if (plan.stack.name !== stackName) {
    refuse(`the saved plan ${file} is for stack "${plan.stack.name}", but ${stackFile} defines stack "${stackName}"`, `Apply it with the stack it was made for (-f), or make a plan of this stack. Nothing was applied.`);
  }
}

/** The state has not changed since the plan was made (lineage and serial). */
export function checkNotStale(plan: Plan, file: string, prior: State | undefined): void {
  const stale = (prior?.lineage ?? null) !== plan.prior_state.lineage || (prior?.serial ?? null) !== plan.prior_state.serial;
  if (!stale) return;
  refuse(
    `the saved plan ${file} is stale: the state changed since it was made`,
    `The plan was made from state serial ${plan.prior_state.serial ?? "(none)"}${plan.prior_state.lineage ? ` (lineage ${plan.prior_state.lineage})` : ""}; the state is now serial ${prior?.serial ?? "(none)"}${prior ? ` (lineage ${prior.lineage})` : ""}. ${AGAIN}`,
  );
}

/** A fresh plan makes the grant changes the saved one shows. */
export function checkSameChanges(saved: Plan, file: string, fresh: Plan): void {
  const differences = planDifferences(saved, fresh);
  if (!differences.length) return;
  const shown = differences.slice(0, SHOWN_DIFFERENCES).map((d) => `  - ${d}`);
  if (differences.length > SHOWN_DIFFERENCES) shown.push(`  and ${differences.length - SHOWN_DIFFERENCES} more`);
  refuse(
    `the saved plan ${file} differs from what apply would do now`,
    `A fresh plan (the same stack, state and options, against the live cloud) does not make the reviewed changes:\n${shown.join("\n")}\nA live policy or the stack changed since the review, or the file was edited. ${AGAIN}`,
  );
}
