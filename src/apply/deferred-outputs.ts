// A program's `.apply` on a value known only during apply (src/sdk/deferred.ts): in the plan's
// outputs it is `{"fn::apply": [id, source]}`, unknown at plan time. Once the resources are
// applied, each whose source is now known has its function run (in the program's thread) and is
// replaced by the result, as a literal (secret when its source is), before the outputs are computed.
import { escapeLiteral, containsUnknown } from "../language/expressions.js";
import { functionCall, PROGRAM_APPLY } from "../language/functions.js";
import { resolveValue, type Scope } from "../language/resolve.js";
import { containsSensitive, plain, secretStrings, sensitive } from "../language/sensitive.js";
import { rememberSecrets } from "../config/redact.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";

/** Runs a program's function `id` on a value: its result. */
export type DeferredRunner = (id: number, value: unknown) => Promise<unknown>;

/** A value as a stack document holds it: literal text with every "$" doubled. */
function literal(v: unknown): unknown {
  if (typeof v === "string") return escapeLiteral(v);
  if (Array.isArray(v)) return v.map(literal);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, literal(x)]));
}

/** `raw` with every program function whose source is known replaced by its result (innermost first);
 *  a function that throws is a diagnostic, and its output stays unknown. */
async function settle(
  raw: unknown,
  name: string,
  scope: Scope,
  run: DeferredRunner,
  diags: Diagnostic[],
): Promise<unknown> {
  if (Array.isArray(raw)) return Promise.all(raw.map((v) => settle(v, name, scope, run, diags)));
  if (raw === null || typeof raw !== "object") return raw;
  const call = functionCall(raw);
  if (call?.key !== PROGRAM_APPLY) {
    const settleEntry = async ([k, v]: [string, unknown]) => [k, await settle(v, name, scope, run, diags)] as const;
    return Object.fromEntries(await Promise.all(Object.entries(raw).map(settleEntry)));
  }
  const [id, source] = call.args as [number, unknown];
  const value = resolveValue(await settle(source, name, scope, run, diags), ["outputs", name], scope, undefined, []);
  if (containsUnknown(value)) return raw;
  try {
    const computed = await run(id, plain(value));
    if (!containsSensitive(value)) return literal(computed);
    // A secret computed only now: every channel of this process scrubs it from here on.
    rememberSecrets(secretStrings(sensitive(computed)));
    return { "fn::secret": literal(computed) };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const summary = `output "${name}": the program's .apply(…) failed during apply: ${why}`;
    diags.push(error(summary, { address: `outputs.${name}` }));
    return raw;
  }
}

/** The plan's output expressions with the program's functions run where their values are known. */
export async function settleDeferredOutputs(
  outputs: Record<string, unknown> | undefined,
  scope: Scope,
  run: DeferredRunner | undefined,
  diags: Diagnostic[],
): Promise<Record<string, unknown> | undefined> {
  if (!outputs || !run || !JSON.stringify(outputs).includes(`"${PROGRAM_APPLY}"`)) return outputs;
  // Each function runs once on a value, as Pulumi runs it: an output built on another (a property
  // of it) reuses its result.
  const ran = new Map<string, Promise<unknown>>();
  const once: DeferredRunner = (id, value) => {
    const key = `${id}\u0000${JSON.stringify(value)}`;
    if (!ran.has(key)) ran.set(key, run(id, value));
    return ran.get(key)!;
  };
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, raw] of Object.entries(outputs)) out[name] = await settle(raw, name, scope, once, diags);
  return out;
}
