// A guardrail rule as declared and compiled: what ./rules.ts loads and ./builtins.ts declares.
import type { CompiledCondition } from "./compile.js";

export const ENFORCEMENTS = ["advisory", "mandatory", "owner-approval"] as const;
export type Enforcement = (typeof ENFORCEMENTS)[number];

export interface Rule {
  id: string;
  description: string;
  condition: string;
  enforcement: Enforcement;
  /** Who may approve (CONVERGE_ACTOR values) an owner-approval rule. */
  approvers: string[];
  /** Set for a built-in rule. */
  builtin?: true;
  /** Where it is declared (a built-in: where it is configured, if anywhere). */
  file?: string;
  line?: number;
  column?: number;
  compiled: CompiledCondition;
}
