// Outputs made of several inputs (Pulumi's `all` and `concat`): known when every part is.
import { hasPending, type Input, knownValue, type Output, output, outputOf } from "./output.js";

/** The parts joined as one string (Pulumi's `concat`). */
export function concat(...params: Input<unknown>[]): Output<string> {
  const parts: unknown[] = [""];
  for (const p of params) parts.push(p, "");
  return outputOf<string>({ kind: "template", parts });
}

type Unwrapped<T> = T extends Output<infer U> ? U : T extends Promise<infer U> ? U : T;

/** One output of a list (or a map) of inputs: known when every part is. */
type AllOf<T extends readonly unknown[]> = { -readonly [K in keyof T]: Unwrapped<T[K]> };

export function all<T extends readonly unknown[] | []>(values: T): Output<AllOf<T>>;
export function all<T extends Record<string, unknown>>(values: T): Output<{ [K in keyof T]: Unwrapped<T[K]> }>;
export function all(values: readonly unknown[] | Record<string, unknown>): Output<unknown> {
  if (Array.isArray(values)) return outputOf({ kind: "list", items: values.map((v) => output(v)) });
  // A map: each field an output (a map of outputs is an input as is).
  const entries = Object.entries(values);
  const list = outputOf<unknown[]>({
    kind: "list",
    items: entries.map(([, v]) => output(v)),
  });
  if (!knownValue(list) && !hasPending(list)) {
    return output(Object.fromEntries(entries));
  }
  return list.apply((vs) => Object.fromEntries(entries.map(([k], i) => [k, vs[i]])));
}
