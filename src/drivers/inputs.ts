import type { IamDriver, IamInputs } from "./types.js";

/** The inputs inside a plan or state value (inputs + computed outputs): the type's input fields. */
export function inputsOf(d: IamDriver, value: unknown): IamInputs {
  const v = (value ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of d.inputFields)
    if ((v[f] !== undefined && v[f] !== null) || f === "name" || f === "role") out[f] = v[f];
  return out as unknown as IamInputs;
}
