// The emulator's own check of IAM condition expressions, done as Google's server does it: the
// expression is parsed, then type-checked against a declared environment (qualified variables
// and function overloads, in the manner of cel-go) and must be of type bool. Literal values are
// not checked: Google accepts timestamp("garbage"), which then never grants access.
//
// This is deliberately independent of the client's checker (src/iam): the emulator is the oracle
// of the end-to-end tests, so it must not share the code whose verdicts it judges. Source:
// https://cloud.google.com/iam/docs/conditions-attribute-reference
import { parseCel as parse } from "../base/cel-parser.js";

type Parsed = ReturnType<typeof parse>;
type Node = NonNullable<Parsed["expr"]>;

/** A CEL type: a name with parameters (list, map), `dyn`, or a type variable (A, B). */
interface Ty {
  name: string;
  params: Ty[];
  variable?: true;
}

const ty = (name: string, ...params: Ty[]): Ty => ({ name, params });
const tvar = (name: string): Ty => ({ name, params: [], variable: true });
const BOOL = ty("bool"),
  INT = ty("int"),
  UINT = ty("uint"),
  DOUBLE = ty("double"),
  STRING = ty("string"),
  BYTES = ty("bytes");
const NULL = ty("null_type"),
  DYN = ty("dyn"),
  TS = ty("google.protobuf.Timestamp"),
  DUR = ty("google.protobuf.Duration");
const A = tvar("A"),
  B = tvar("B");
const list = (t: Ty) => ty("list", t);
const map = (k: Ty, v: Ty) => ty("map", k, v);

function show(t: Ty): string {
  if (t.name === "list") return `list(${show(t.params[0]!)})`;
  if (t.name === "map") return `map(${show(t.params[0]!)}, ${show(t.params[1]!)})`;
  return t.name;
}

/** The attributes IAM declares, by qualified name. */
const VARIABLES: Record<string, Ty> = {
  "request.time": TS,
  "request.host": STRING,
  "request.path": STRING,
  "request.auth.access_levels": list(STRING),
  "resource.name": STRING,
  "resource.type": STRING,
  "resource.service": STRING,
  "destination.ip": STRING,
  "destination.port": INT,
};

/** An overload: argument types (the receiver first for a member function) and the result. */
interface Overload {
  member: boolean;
  args: Ty[];
  result: Ty;
}
const fn = (args: Ty[], result: Ty): Overload => ({ member: false, args, result });
const method = (args: Ty[], result: Ty): Overload => ({ member: true, args, result });

const NUMBERS = [INT, UINT, DOUBLE];
const ORDERED = [INT, UINT, DOUBLE, STRING, BYTES, BOOL, TS, DUR];
const TIME_GETTERS = [
  "getDate",
  "getDayOfMonth",
  "getDayOfWeek",
  "getDayOfYear",
  "getFullYear",
  "getHours",
  "getMilliseconds",
  "getMinutes",
  "getMonth",
  "getSeconds",
];

const FUNCTIONS: Record<string, Overload[]> = {
  "_&&_": [fn([BOOL, BOOL], BOOL)],
  "_||_": [fn([BOOL, BOOL], BOOL)],
  "!_": [fn([BOOL], BOOL)],
  "_==_": [fn([A, A], BOOL)],
  "_!=_": [fn([A, A], BOOL)],
  ...Object.fromEntries(["_<_", "_<=_", "_>_", "_>=_"].map((op) => [op, ORDERED.map((t) => fn([t, t], BOOL))])),
  "_+_": [
    ...[...NUMBERS, STRING, BYTES].map((t) => fn([t, t], t)),
    fn([TS, DUR], TS),
    fn([DUR, TS], TS),
    fn([DUR, DUR], DUR),
    fn([list(A), list(A)], list(A)),
  ],
  "_-_": [...NUMBERS.map((t) => fn([t, t], t)), fn([TS, DUR], TS), fn([TS, TS], DUR), fn([DUR, DUR], DUR)],
  "_*_": NUMBERS.map((t) => fn([t, t], t)),
  "_/_": NUMBERS.map((t) => fn([t, t], t)),
  "_%_": [INT, UINT].map((t) => fn([t, t], t)),
  "-_": [fn([INT], INT), fn([DOUBLE], DOUBLE)],
  "@in": [fn([A, list(A)], BOOL), fn([A, map(A, B)], BOOL)],
  "_[_]": [fn([list(A), INT], A), fn([map(A, B), A], B)],
  "_?_:_": [fn([BOOL, A, A], A)],
  timestamp: [fn([STRING], TS)],
  date: [fn([STRING], TS)],
  duration: [fn([STRING], DUR)],
  startsWith: [method([STRING, STRING], BOOL)],
  endsWith: [method([STRING, STRING], BOOL)],
  matches: [method([STRING, STRING], BOOL)],
  extract: [method([STRING, STRING], STRING)],
  hasOnly: [method([list(A), list(A)], BOOL)],
  ...Object.fromEntries(TIME_GETTERS.map((g) => [g, [method([TS], INT), method([TS, STRING], INT)]])),
  "resource.matchTag": [fn([STRING, STRING], BOOL)],
  "resource.matchTagId": [fn([STRING, STRING], BOOL)],
  "resource.hasTagKey": [fn([STRING], BOOL)],
  "resource.hasTagKeyId": [fn([STRING], BOOL)],
  "api.getAttribute": [fn([STRING, A], A)],
  "compute.isForwardingRuleCreationOperation": [fn([], BOOL)],
  "compute.matchLoadBalancingSchemes": [fn([list(STRING)], BOOL)],
};

type Subst = Map<string, Ty>;

/** Whether `actual` fits `want`, binding type variables in `s`. */
function unify(want: Ty, actual: Ty, s: Subst): boolean {
  if (want.variable) {
    const bound = s.get(want.name);
    if (bound) return unify(bound, actual, s) || (bound.name === "dyn" && (s.set(want.name, actual), true));
    s.set(want.name, actual);
    return true;
  }
  if (want.name === "dyn" || actual.name === "dyn") return true;
  return (
    want.name === actual.name &&
    want.params.length === actual.params.length &&
    want.params.every((p, i) => unify(p, actual.params[i]!, s))
  );
}

function substitute(t: Ty, s: Subst): Ty {
  if (t.variable) return s.get(t.name) ?? DYN;
  return t.params.length ? { name: t.name, params: t.params.map((p) => substitute(p, s)) } : t;
}

/** `rec[key]` for an own key only: names come from the expression ("constructor" is not declared). */
function declared<V>(rec: Record<string, V>, key: string): V | undefined {
  return Object.hasOwn(rec, key) ? rec[key] : undefined;
}

class CheckError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

class Env {
  constructor(
    private readonly text: string,
    private readonly positions: Record<string, number>,
  ) {}

  offset(n: Node): number {
    const p = this.positions[String(n.id)] ?? 0;
    return p + (/^[\s.]*/.exec(this.text.slice(p))?.[0].length ?? 0);
  }

  error(n: Node, message: string): never {
    throw new CheckError(message, this.offset(n));
  }

  /** `a.b.c` for a chain of identifiers and field selections, else undefined. */
  qualified(n: Node): string | undefined {
    const k = n.exprKind;
    if (k.case === "identExpr") return k.value.name.replace(/^\./, "");
    if (k.case === "selectExpr" && !k.value.testOnly && k.value.operand) {
      const q = this.qualified(k.value.operand);
      return q === undefined ? undefined : `${q}.${k.value.field}`;
    }
    return undefined;
  }

  check(n: Node): Ty {
    const k = n.exprKind;
    switch (k.case) {
      case "constExpr": {
        const byKind: Record<string, Ty> = {
          boolValue: BOOL,
          int64Value: INT,
          uint64Value: UINT,
          doubleValue: DOUBLE,
          stringValue: STRING,
          bytesValue: BYTES,
          nullValue: NULL,
        };
        return declared(byKind, k.value.constantKind.case ?? "") ?? this.error(n, "unsupported literal");
      }
      case "identExpr":
      case "selectExpr":
        return this.reference(n);
      case "listExpr":
        return list(this.join(k.value.elements));
      case "structExpr": {
        if (k.value.messageName)
          return this.error(n, `undeclared reference to '${k.value.messageName}' (in container '')`);
        const keys = k.value.entries.flatMap((e) => (e.keyKind.case === "mapKey" ? [e.keyKind.value] : []));
        return map(this.join(keys), this.join(k.value.entries.map((e) => e.value!)));
      }
      case "callExpr":
        return this.call(n, k.value.function, k.value.target, k.value.args);
      case "comprehensionExpr":
        // The IAM environment declares none of the helpers CEL's macros expand to.
        return this.error(n, "undeclared reference to '@not_strictly_false' (in container '')");
      default:
        return this.error(n, "unsupported expression");
    }
  }

  /** The most general type of several expressions (a list's elements, a map's keys or values). */
  join(nodes: Node[]): Ty {
    let t: Ty = DYN;
    for (const n of nodes) {
      const u = this.check(n);
      if (t.name === "dyn") t = u;
      else if (!unify(t, u, new Map()) && !unify(u, t, new Map())) t = DYN;
    }
    return t;
  }

  reference(n: Node): Ty {
    const q = this.qualified(n);
    const variable = q === undefined ? undefined : declared(VARIABLES, q);
    if (variable) return variable;
    const k = n.exprKind;
    if (k.case === "selectExpr" && k.value.testOnly)
      return this.error(n, "undeclared reference to 'has' (in container '')");
    if (k.case !== "selectExpr" || (q !== undefined && !Object.keys(VARIABLES).some((v) => q.startsWith(`${v}.`)))) {
      return this.error(n, `undeclared reference to '${q ?? "?"}' (in container '')`);
    }
    const operand = this.check(k.value.operand!);
    if (operand.name === "dyn") return DYN;
    if (operand.name === "map" && unify(operand.params[0]!, STRING, new Map())) return operand.params[1]!;
    return this.error(n, `type '${show(operand)}' does not support field selection`);
  }

  call(n: Node, name: string, target: Node | undefined, args: Node[]): Ty {
    let key = name;
    let actual: Ty[];
    let member = false;
    const ns = target ? this.qualified(target) : undefined;
    if (target && ns !== undefined && declared(FUNCTIONS, `${ns}.${name}`)) {
      key = `${ns}.${name}`;
      actual = args.map((a) => this.check(a));
    } else {
      member = target !== undefined;
      actual = [...(target ? [this.check(target)] : []), ...args.map((a) => this.check(a))];
    }
    const overloads = declared(FUNCTIONS, key);
    if (!overloads) return this.error(n, `undeclared reference to '${key}' (in container '')`);
    // Several overloads may match a dyn argument: the result is then dyn unless they agree.
    const results: Ty[] = [];
    for (const o of overloads.filter((x) => x.member === member && x.args.length === actual.length)) {
      const s: Subst = new Map();
      if (o.args.every((t, i) => unify(t, actual[i]!, s))) results.push(substitute(o.result, s));
    }
    if (results.length > 0) return results.every((r) => show(r) === show(results[0]!)) ? results[0]! : DYN;
    const shown = actual.map(show);
    const applied = member ? `${shown[0]}.(${shown.slice(1).join(", ")})` : `(${shown.join(", ")})`;
    return this.error(n, `found no matching overload for '${key}' applied to '${applied}'`);
  }
}

/** `<input>:LINE:COL` of an offset in `text`. */
function location(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `<input>:${before.length}:${before[before.length - 1]!.length + 1}`;
}

/**
 * What Google says of a condition expression it refuses (CEL's `ERROR: <input>:L:C: …`), or
 * undefined when it accepts it.
 */
export function conditionExpressionProblem(expression: string): string | undefined {
  let parsed: Parsed;
  try {
    parsed = parse(expression);
  } catch (e) {
    const m = /^(<input>:\d+:\d+): (.*)$/s.exec((e as Error).message);
    return m ? `ERROR: ${m[1]}: Syntax error: ${m[2]}` : `ERROR: <input>:1:1: Syntax error: ${(e as Error).message}`;
  }
  if (!parsed.expr) return "ERROR: <input>:1:1: Syntax error: empty expression";
  const env = new Env(expression, (parsed.sourceInfo?.positions ?? {}) as Record<string, number>);
  try {
    const t = env.check(parsed.expr);
    if (t.name !== "bool" && t.name !== "dyn")
      return `ERROR: ${location(expression, 0)}: expected type 'bool' but found '${show(t)}'`;
    return undefined;
  } catch (e) {
    if (e instanceof CheckError) return `ERROR: ${location(expression, e.offset)}: ${e.message}`;
    throw e;
  }
}
