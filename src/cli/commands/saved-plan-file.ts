// The first checks `apply FILE` makes before it trusts a saved plan with anything: it is a
// converge plan, and its digest (and with CONVERGE_PLAN_KEY its signature) matches. Each failure
// is a user error that says nothing was applied; none of them prints the key. The checks against
// the stack, the state and a fresh plan follow in ../../engine/saved-plan-checks.ts.
import { UserError, warning } from "../../diagnostics/diagnostic.js";
import { jsonSyntaxMessage } from "../../diagnostics/json-syntax.js";
import { InputFileError, MAX_DATA_BYTES, readInputFile } from "../../fs/input-file.js";
import type { Plan } from "../../generated/schemas.js";
import { PLAN_KEY_ENV, refuseDeepPlan, verifySeal } from "../../plan/saved-plan.js";
import { PLAN_FORMAT } from "../../base/version.js";
import { describeErrors, validate } from "../../schemas/index.js";
import { printDiagnostics } from "../common.js";

const AGAIN = "Nothing was applied. Run `converge plan --out FILE` again and review it.";

function refuse(summary: string, detail: string): never {
  throw new UserError({ severity: "error", summary, detail });
}

/** The saved plan's text, without a leading byte order mark: an editor may add one, and the seal
 *  covers the plan's canonical content, not the file's bytes (../../plan/saved-plan.ts), so a BOM
 *  changes nothing that is checked. */
function planText(file: string): string {
  let text: string;
  try {
    text = readInputFile(file, "the saved plan", MAX_DATA_BYTES).toString("utf8");
  } catch (e) {
    if (e instanceof InputFileError) throw e.userError({ detail: `${e.detail} Nothing was applied.` });
    refuse(`cannot read the saved plan ${file}: ${(e as Error).message}`, "Nothing was applied.");
  }
  return text.startsWith("\ufeff") ? text.slice(1) : text;
}

/** A plan saved by a converge that wrote another plan format is refused by name, before its schema
 *  is checked: "is not a converge plan" would send the user after the wrong problem. */
function refuseOtherFormat(data: unknown, file: string): void {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return;
  const { format_version: format, converge_version: made } = data as Record<string, unknown>;
  if (typeof format !== "string" || format === PLAN_FORMAT) return;
  const quoted = (v: string) => JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  const by = typeof made === "string" ? ` (converge ${quoted(made)})` : "";
  refuse(
    `the saved plan ${file} was saved in plan format ${quoted(format)}${by}` +
      `; this converge reads format "${PLAN_FORMAT}"`,
    `Plans are saved in the format of the converge that makes them. ${AGAIN}`,
  );
}

/** Reads and checks the plan file itself: JSON, the plan schema, the seal, no errors. */
export function readSavedPlan(file: string, key: string | undefined): Plan {
  const text = planText(file);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    refuse(`the saved plan ${file} is not valid JSON: ${jsonSyntaxMessage(e, text)}`, "Nothing was applied.");
  }
  refuseDeepPlan(text, data, file);
  refuseOtherFormat(data, file);
  const errors = validate("plan.schema.json", data);
  if (errors.length)
    throw new UserError({
      severity: "error",
      summary: `${file} is not a converge plan`,
      detail: describeErrors(errors.slice(0, 5)),
    });
  const plan = data as Plan;
  const seal = verifySeal(plan, key);
  switch (seal.problem) {
    case "no-digest":
      return refuse(
        `the saved plan ${file} has no digest`,
        `Only plans saved by \`converge plan --out\` can be applied. ${AGAIN}`,
      );
    case "digest-mismatch":
      return refuse(`the saved plan ${file} does not match its digest: it was changed after it was saved`, AGAIN);
    case "no-signature":
      return refuse(
        `the saved plan ${file} is not signed, and ${PLAN_KEY_ENV} is set`,
        `With ${PLAN_KEY_ENV} set, only plans saved by \`converge plan ` +
          `--out\` with the same key can be applied. ${AGAIN}`,
      );
    case "signature-mismatch":
      return refuse(
        `the saved plan ${file} has a signature that does not match ${PLAN_KEY_ENV}`,
        `It was signed with another key, or changed after it was saved. ${AGAIN}`,
      );
    default:
  }
  if (seal.unchecked)
    printDiagnostics([
      warning(`the saved plan ${file} is signed, but ${PLAN_KEY_ENV} is not set: its signature was not checked`),
    ]);
  if (plan.errored) refuse(`the saved plan ${file} has errors and cannot be applied`, AGAIN);
  return plan;
}
