// A rule's condition made ready to run, and checked at load: CEL syntax, names (variables, and the
// fields of the variables that have fixed fields), then a run over typed sample values that catches
// what CEL's overloads refuse (`role + 1`) and a result that is not a boolean. Each problem is
// returned with its offset in the expression, for the caller to position in its file.
import type * as Cel from "@bufbuild/cel";
import { type ConditionProblem, parseProblem, suggest } from "../iam/condition-problem.js";
import { celLibrary, FIELDS, ruleEnv, VARIABLES } from "./cel.js";
import { type RuleValues, sampleValues, toCel } from "./values.js";

type Parsed = ReturnType<typeof Cel.parse>;
type Expr = NonNullable<Parsed["expr"]>;

export interface CompiledCondition {
  /** True when the change breaks the rule; an Error when the rule could not be evaluated. */
  run(values: RuleValues): boolean | Error;
}

let env: Cel.CelEnv | undefined;

/** Compiles `expression`, or says what is wrong with it and where. */
export function compileCondition(expression: string): CompiledCondition | ConditionProblem {
  const { cel } = celLibrary();
  let parsed: Parsed;
  try {
    parsed = cel.parse(expression);
  } catch (e) {
    return parseProblem(expression, e as Error);
  }
  if (!parsed.expr) return { message: "the condition is empty", offset: 0 };
  const positions = (parsed.sourceInfo?.positions ?? {}) as Record<string, number>;
  const named = nameProblem(parsed.expr, new Set(), positions);
  if (named) return named;
  const fn = cel.plan((env ??= ruleEnv()), parsed) as (ctx: Record<string, unknown>) => unknown;
  const run = (values: RuleValues): boolean | Error => {
    const r = fn(toCel(values));
    if (cel.isCelError(r)) return new Error(r.message);
    return typeof r === "boolean" ? r : new Error(`the condition is not a boolean (it gave ${typeof r})`);
  };
  // Where an evaluation error is: the parser may position an operator on the blank before it.
  const at = (id: bigint | undefined) => {
    const p = id !== undefined ? (positions[String(id)] ?? 0) : 0;
    return p + (/^\s*/.exec(expression.slice(p))?.[0].length ?? 0);
  };
  for (const sample of sampleValues()) {
    const r = fn(toCel(sample));
    if (cel.isCelError(r)) {
      // Only a type error is the rule's fault: a missing key depends on the data.
      if (!/no matching overload|unbound|undeclared|unknown function/i.test(r.message)) continue;
      return { message: r.message, offset: at(r.exprId) };
    }
    if (typeof r !== "boolean")
      return {
        message: "a rule's condition must be a boolean expression (true: the change breaks the rule)",
        offset: 0,
      };
  }
  return { run };
}

export const isProblem = (c: CompiledCondition | ConditionProblem): c is ConditionProblem => "message" in c;

/** The first unknown variable, or unknown field of a variable with fixed fields, in `e`. */
function nameProblem(
  e: Expr,
  bound: ReadonlySet<string>,
  positions: Record<string, number>,
): ConditionProblem | undefined {
  const at = (x: Expr) => positions[String(x.id)] ?? 0;
  const k = e.exprKind;
  const sub = (xs: (Expr | undefined)[], names = bound) => {
    for (const x of xs) {
      const p = x ? nameProblem(x, names, positions) : undefined;
      if (p) return p;
    }
    return undefined;
  };
  switch (k.case) {
    case "identExpr":
      if (bound.has(k.value.name) || VARIABLES.includes(k.value.name)) return undefined;
      return {
        message:
          `unknown variable ${k.value.name}${suggest(k.value.name, VARIABLES)}` +
          ` (a rule sees ${VARIABLES.join(", ")})`,
        offset: at(e),
      };
    case "selectExpr": {
      const op = k.value.operand;
      const root =
        op?.exprKind.case === "identExpr" && !bound.has(op.exprKind.value.name) ? op.exprKind.value.name : undefined;
      const fields = root !== undefined && Object.hasOwn(FIELDS, root) ? FIELDS[root]! : undefined;
      if (fields && !fields.includes(k.value.field)) {
        const field = k.value.field;
        return {
          message: `${root} has no field ${field}${suggest(field, fields)} (it has ${fields.join(", ")})`,
          offset: at(e) + 1,
        };
      }
      return sub([op]);
    }
    case "callExpr":
      return sub([k.value.target, ...k.value.args]);
    case "listExpr":
      return sub(k.value.elements);
    case "structExpr":
      return sub(k.value.entries.flatMap((x) => [x.keyKind.case === "mapKey" ? x.keyKind.value : undefined, x.value]));
    case "comprehensionExpr": {
      const c = k.value;
      const inner = new Set(bound).add(c.iterVar).add(c.accuVar);
      if (c.iterVar2) inner.add(c.iterVar2);
      return sub([c.iterRange, c.accuInit]) ?? sub([c.loopCondition, c.loopStep, c.result], inner);
    }
    default:
      return undefined;
  }
}
