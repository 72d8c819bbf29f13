import type { IamDriver, IamInputs } from "./types.js";

/** The inputs inside a plan or state value (inputs + computed outputs). */
export function inputsOf(d: IamDriver, value: unknown): IamInputs {
  const v = (value ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { name: v.name, role: v.role };
  if (d.ownership === "binding") out.members = v.members;
  else out.member = v.member;
  if (v.condition) out.condition = v.condition;
  return out as unknown as IamInputs;
}
