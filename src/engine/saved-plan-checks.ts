// The checks that `apply FILE` makes of a saved plan against the session: it was made for the
// loaded stack from the current state, and a fresh plan makes the same grant changes. Each failure
// is a user error that says nothing was applied. (The file's own checks, its schema and seal, are
// the CLI's: ../cli/commands/saved-plan-file.ts.)
import { UserError } from "../diagnostics/diagnostic.js";
import type { Plan, State } from "../generated/schemas.js";
import { planDifferences } from "../plan/plan-differences.js";
import { sameInputs } from "../config/redact.js";
import type { ConfigDecl } from "../config/inputs.js";
import { describeIdentity, type StateIdentity } from "../state/factory.js";

const AGAIN = "Nothing was applied. Run `converge plan --out FILE` again and review it.";
/** Differences listed in full; the rest are counted. */
const SHOWN_DIFFERENCES = 50;

function refuse(summary: string, detail: string): never {
  throw new UserError({ severity: "error", summary, detail });
}

/** The plan was made for the stack that `-f` loads. */
export function checkStackName(plan: Plan, file: string, stackName: string, stackFile: string): void {
  if (plan.stack.name !== stackName) {
    refuse(
      `the saved plan ${file} is for stack "${plan.stack.name}", but ${stackFile} defines stack "${stackName}"`,
      `Apply it with the stack it was made for (-f), or make a plan of this stack. Nothing was applied.`,
    );
  }
}

/** The plan was made from the state that apply would use: the same backend, workspace and state
 *  file (or schema). A plan that does not say (saved by an earlier version) is refused too: the
 *  staleness check alone cannot tell two states without a state apart. */
export function checkSameState(plan: Plan, file: string, current: StateIdentity): void {
  const made = plan.backend;
  if (!made) {
    refuse(
      `the saved plan ${file} does not say which state it was made from: it was made by an older converge`,
      `converge applies a saved plan only to the state (backend, workspace and state file) ` +
        `it was made from, which this plan does not record. ${AGAIN}`,
    );
  }
  if (
    made.type === current.type &&
    made.workspace === current.workspace &&
    made.path === current.path &&
    made.schema === current.schema
  )
    return;
  refuse(
    `the saved plan ${file} was made for workspace "${made.workspace}" (${describeIdentity(made)}), but ` +
      `apply would use workspace "${current.workspace}" (${describeIdentity(current)})`,
    `Apply it with the state it was made for (--workspace, CONVERGE_WORKSPACE or \`converge workspace ` +
      `select\`; --state; --backend), or make a plan for this one. Nothing was applied.`,
  );
}

/** The state has not changed since the plan was made (lineage and serial). */
export function checkNotStale(plan: Plan, file: string, prior: State | undefined): void {
  const stale =
    (prior?.lineage ?? null) !== plan.prior_state.lineage || (prior?.serial ?? null) !== plan.prior_state.serial;
  if (!stale) return;
  refuse(
    `the saved plan ${file} is stale: the state changed since it was made`,
    `The plan was made from state serial ${plan.prior_state.serial ?? "(none)"}` +
      `${plan.prior_state.lineage ? ` (lineage ${plan.prior_state.lineage})` : ""}; the state is now serial ` +
      `${prior?.serial ?? "(none)"}${prior ? ` (lineage ${prior.lineage})` : ""}. ${AGAIN}`,
  );
}

/** `apply FILE` was given the inputs the plan was made with (the file holds only their hash). */
export function checkSameInputs(saved: Plan, file: string, config: ReadonlyMap<string, ConfigDecl>): void {
  if (!config.size && !saved.inputs_hash) return;
  if (saved.inputs_hash && sameInputs(config, saved.inputs_hash)) return;
  refuse(
    `the inputs given to apply are not those the saved plan ${file} was made with`,
    `Give apply the same --var, --var-file and CONVERGE_VAR_ values as plan (the plan ` +
      `holds only a hash of them, secrets included). ${AGAIN}`,
  );
}

/** A fresh plan makes the grant changes the saved one shows. `fresh` was planned from the stack
 *  file apply loaded (-f); when that is not the file the plan was made from, the refusal says so
 *  (a plan made elsewhere, in another checkout, names another path for the same file). */
export function checkSameChanges(saved: Plan, file: string, fresh: Plan): void {
  const differences = planDifferences(saved, fresh);
  if (!differences.length) return;
  const shown = differences.slice(0, SHOWN_DIFFERENCES).map((d) => `  - ${d}`);
  if (differences.length > SHOWN_DIFFERENCES) shown.push(`  and ${differences.length - SHOWN_DIFFERENCES} more`);
  const otherFile =
    saved.stack.file !== fresh.stack.file
      ? `\nThe plan was made from ${saved.stack.file}; this apply loaded ${fresh.stack.file} (-f).`
      : "";
  refuse(
    `the saved plan ${file} differs from what apply would do now`,
    `A fresh plan (the same stack, state and options, against the live cloud) does not make the reviewed ` +
      `changes:\n${shown.join("\n")}\nA live policy or the stack changed since the review, or the file was ` +
      `edited. ${AGAIN}${otherFile}`,
  );
}
