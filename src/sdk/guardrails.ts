// Guardrail rules declared by a program stack (`policies:` of a YAML stack, docs/guardrails.md):
// `new GuardrailRule(id, { description, enforcement, condition, approvers })` and
// `new BuiltinGuardrail(id, setting)`. They are checked when the stack loads, as a YAML stack's
// are; each problem is an error at the call that declared it.
import { currentProgram } from "./context.js";

export interface GuardrailRuleArgs {
  description: string;
  enforcement: "advisory" | "mandatory" | "owner-approval";
  /** CEL, true when a change breaks the rule. */
  condition: string;
  /** Who may approve an owner-approval rule (CONVERGE_ACTOR values). */
  approvers?: string[];
}

/** A custom rule of the stack. */
export class GuardrailRule {
  constructor(
    readonly id: string,
    args: GuardrailRuleArgs,
  ) {
    const program = currentProgram(`new GuardrailRule("${id}")`);
    program.addRule({ id, ...args }, program.siteOfCaller());
  }
}

/** A built-in rule's setting: off, advisory, mandatory, owner-approval, or a mapping with
 *  `enforcement`, `approvers` and the rule's own settings (`domains`, `pairs`, `scope`…). */
export type BuiltinSetting = "off" | GuardrailRuleArgs["enforcement"] | Record<string, unknown>;

/** Sets a built-in rule of the stack (`policies.builtins.ID`). */
export class BuiltinGuardrail {
  constructor(
    readonly id: string,
    setting: BuiltinSetting,
  ) {
    const program = currentProgram(`new BuiltinGuardrail("${id}")`);
    program.addBuiltin(id, setting, program.siteOfCaller());
  }
}
