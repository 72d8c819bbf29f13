// The functions Pulumi YAML users expect, written as a map with one `fn::` key wherever a value
// is resolved (properties, variables, outputs): fn::join, fn::split, fn::select, fn::toJSON and
// fn::secret. Their shape is checked when the stack loads; they are evaluated at plan time, once
// their arguments are known (an unknown argument makes the result unknown).
import { suggest } from "../diagnostics/did-you-mean.js";
import type { DocPath } from "../yaml/source.js";

const FUNCTION_NAMES = ["fn::join", "fn::split", "fn::select", "fn::toJSON", "fn::secret"] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** A program's `.apply` on a value known only during apply (src/sdk/deferred.ts): `[id, source]`,
 *  only in a program's outputs; unknown at plan time, computed by apply. */
export const PROGRAM_APPLY = "fn::apply";

/** What `fn::invoke` is: a data source, only as a variable's whole value (./load.ts). */
const INVOKE = "fn::invoke";

export interface FunctionCall {
  /** The `fn::` key as written */
  key: string;
  args: unknown;
}

/** A map whose only key starts with `fn::` is a function call. */
export function functionCall(v: unknown): FunctionCall | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  const keys = Object.keys(v);
  if (keys.length !== 1 || !keys[0]!.startsWith("fn::")) return undefined;
  return { key: keys[0]!, args: (v as Record<string, unknown>)[keys[0]!] };
}

/** A problem with a call, at a path relative to the call's key. */
export interface CallProblem {
  path: DocPath;
  message: string;
  detail?: string;
}

const USAGE: Record<FunctionName, string> = {
  "fn::join": 'fn::join: [",", ["a", "b"]] is "a,b"',
  "fn::split": 'fn::split: [",", "a,b"] is ["a", "b"]',
  "fn::select": 'fn::select: [1, ["a", "b"]] is "b"',
  "fn::toJSON": "fn::toJSON: {a: 1} is '{\"a\":1}'",
  "fn::secret": "fn::secret: VALUE is VALUE, shown as (sensitive)",
};

const isFunctionName = (k: string): k is FunctionName => (FUNCTION_NAMES as readonly string[]).includes(k);

/** Problems visible before evaluation: an unknown function, fn::invoke out of place, a wrong
 *  number of arguments (when the arguments are written as a list). */
export function staticCallProblem(call: FunctionCall): CallProblem | undefined {
  if (call.key === INVOKE)
    return {
      path: [],
      message: "fn::invoke reads a data source and is only allowed as a variable's whole value",
      detail: "Declare a variable with fn::invoke and refer to it with ${name}.",
    };
  if (!isFunctionName(call.key)) {
    const guess = suggest(call.key, [...FUNCTION_NAMES]);
    return {
      path: [],
      message: `unknown function "${call.key}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
      detail: `Functions: ${FUNCTION_NAMES.join(", ")}, and fn::invoke in variables.`,
    };
  }
  const pair = call.key === "fn::join" || call.key === "fn::split" || call.key === "fn::select";
  if (pair && Array.isArray(call.args) && call.args.length !== 2)
    return {
      path: [],
      message: `${call.key} takes a list of 2 arguments, got ${call.args.length}`,
      detail: USAGE[call.key],
    };
  if (
    pair &&
    call.args !== null &&
    typeof call.args !== "object" &&
    !(typeof call.args === "string" && call.args.includes("${"))
  )
    return { path: [], message: `${call.key} takes a list of 2 arguments`, detail: USAGE[call.key] };
  return undefined;
}

export type CallResult = { ok: true; value: unknown } | ({ ok: false } & CallProblem);

const scalar = (v: unknown): v is string | number | boolean =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean";
const fail = (key: FunctionName, path: DocPath, message: string): CallResult => ({
  ok: false,
  path,
  message: `${key}: ${message}`,
  detail: USAGE[key],
});

/** Evaluates a call whose arguments are resolved and known. */
export function evaluateCall(key: string, args: unknown): CallResult {
  if (!isFunctionName(key)) return { ok: false, path: [], message: `unknown function "${key}"` };
  if (key === "fn::toJSON") return { ok: true, value: JSON.stringify(args) };
  if (key === "fn::secret") return { ok: true, value: args };
  if (!Array.isArray(args) || args.length !== 2) return fail(key, [], "takes a list of 2 arguments");
  const [a, b] = args as [unknown, unknown];
  if (key === "fn::select") {
    if (typeof a !== "number" || !Number.isInteger(a) || a < 0)
      return fail(key, [0], "the index must be a whole number from 0");
    if (!Array.isArray(b)) return fail(key, [1], "the second argument must be a list");
    if (a >= b.length) return fail(key, [0], `index ${a} is out of range: the list has ${b.length} element(s)`);
    return { ok: true, value: b[a] };
  }
  if (typeof a !== "string") return fail(key, [0], "the delimiter must be a string");
  if (key === "fn::split")
    return typeof b === "string"
      ? { ok: true, value: b.split(a) }
      : fail(key, [1], "the second argument must be a string");
  if (!Array.isArray(b)) return fail(key, [1], "the second argument must be a list");
  const bad = b.findIndex((x) => !scalar(x));
  if (bad >= 0)
    return fail(
      key,
      [1, bad],
      `element ${bad} is a ` +
        `${Array.isArray(b[bad]) ? "list" : b[bad] === null ? "null" : "map"}; only strings, ` +
        `numbers and booleans can be joined`,
    );
  return { ok: true, value: b.map(String).join(a) };
}
