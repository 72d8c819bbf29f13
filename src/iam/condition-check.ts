// IAM Conditions checked as Google checks them, not only parsed: a CEL expression over the
// attributes and functions of Google's attribute reference
// (https://cloud.google.com/iam/docs/conditions-attribute-reference), type-checked with CEL's
// operators, whose value is a bool. The first problem found is returned with its offset in the
// expression, so that the stack can point at it.
import { parseCel as parse } from "../base/cel-parser.js";
import { type ConditionProblem, parseProblem, suggest } from "./condition-problem.js";
import { assignable, checkLiteral, isList, isMap, T, type Type, typeName } from "./condition-types.js";
import {
  own,
  GROUPS,
  ROOTS,
  API_ATTRIBUTES,
  TIME_PARTS,
  METHODS,
  GLOBALS,
  ARITH,
  OPERATORS,
  ORDERED,
} from "./condition-attributes.js";

type Parsed = ReturnType<typeof parse>;
type Expr = NonNullable<Parsed["expr"]>;
type Call = Extract<Expr["exprKind"], { case: "callExpr" }>["value"];

class Problem extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly neverGrants = false,
  ) {
    super(message);
  }
}

class Checker {
  constructor(
    private readonly text: string,
    private readonly positions: Record<string, number>,
  ) {}

  at(e: Expr): number {
    return this.positions[String(e.id)] ?? 0;
  }

  /** Where the text of `e` starts (a field or a function on a value is positioned at its `.`). */
  start(e: Expr): number {
    const k = e.exprKind;
    if (k.case === "selectExpr" && !k.value.testOnly && k.value.operand) return this.start(k.value.operand);
    if (k.case === "callExpr" && k.value.target) return this.start(k.value.target);
    if (
      k.case === "callExpr" &&
      k.value.args.length > 1 &&
      own(OPERATORS, k.value.function) &&
      k.value.function !== "_?_:_"
    )
      return this.start(k.value.args[0]!);
    return this.at(e);
  }

  /** The offset of an operator (the parser may position it on the blank before it). */
  op(e: Expr): number {
    const p = this.at(e);
    return p + (/^\s*/.exec(this.text.slice(p))?.[0].length ?? 0);
  }

  /** The offset of the name after a `.` at `e` (a field or a function called on a value). */
  nameAt(e: Expr): number {
    const p = this.at(e);
    const m = /^\.\s*/.exec(this.text.slice(p));
    return m ? p + m[0].length : p;
  }

  fail(message: string, offset: number): never {
    throw new Problem(message, offset);
  }

  /** The type of `e`, which may be an attribute group (for a field or a function on it). */
  type(e: Expr): Type {
    const k = e.exprKind;
    switch (k.case) {
      case "constExpr":
        return T.constant(k.value.constantKind.case);
      case "identExpr":
        return this.ident(k.value.name, e);
      case "selectExpr": {
        if (k.value.testOnly) this.fail("has() is not supported in IAM conditions", this.at(e));
        return this.select(this.type(k.value.operand!), k.value.field, e);
      }
      case "callExpr":
        return this.call(k.value, e);
      case "listExpr":
        return T.list(this.same(k.value.elements, "list elements"));
      case "structExpr": {
        if (k.value.messageName)
          this.fail(`message ${k.value.messageName}{…} is not supported in IAM conditions`, this.at(e));
        const keys = k.value.entries
          .map((x) => (x.keyKind.case === "mapKey" ? x.keyKind.value : undefined))
          .filter((x): x is Expr => x !== undefined);
        return T.map(
          this.same(keys, "map keys"),
          this.same(
            k.value.entries.map((x) => x.value!),
            "map values",
          ),
        );
      }
      case "comprehensionExpr": {
        const name = /^\.?\s*([A-Za-z_]\w*)/.exec(this.text.slice(this.at(e)))?.[1] ?? "macro";
        return this.fail(
          `${name}() is not supported in IAM conditions (no macros: all, exists, exists_one, map, filter)`,
          this.nameAt(e),
        );
      }
      default:
        return this.fail("unsupported expression", this.at(e));
    }
  }

  /** The type of a value (an attribute group is not one). */
  value(e: Expr): Type {
    const t = this.type(e);
    if (t.k === "group") {
      const g = own(GROUPS, t.path)!;
      const names = [
        ...Object.keys(g.fields).map((f) => `${t.path}.${f}`),
        ...Object.keys(g.funcs).map((f) => `${t.path}.${f}()`),
      ];
      this.fail(`"${t.path}" is not a value; use ${names.join(", ")}`, this.start(e));
    }
    return t;
  }

  /** One type for all of `items` (elements of a list literal, keys or values of a map). */
  same(items: Expr[], what: string): Type {
    let t: Type = T.dyn;
    for (const item of items) {
      const u = this.value(item);
      if (t.k === "dyn") t = u;
      else if (!assignable(t, u) && !assignable(u, t))
        this.fail(`${what} must have one type: ${typeName(t)} and ${typeName(u)} are mixed`, this.start(item));
    }
    return t;
  }

  ident(name: string, e: Expr): Type {
    if (own(GROUPS, name)) return T.group(name);
    if (name === "principal")
      this.fail(
        '"principal" attributes only apply to principal access boundary policies, not to role bindings',
        this.at(e),
      );
    return this.fail(
      `unknown attribute "${name}"${suggest(name, ROOTS, (s) => `"${s}"`)} (IAM ` +
        `conditions use ${ROOTS.map((r) => `${r}.*`).join(", ")})`,
      this.at(e),
    );
  }

  select(operand: Type, field: string, e: Expr): Type {
    if (operand.k === "group") {
      const g = own(GROUPS, operand.path)!;
      const t = own(g.fields, field);
      if (t) return t;
      const known = [...Object.keys(g.fields), ...Object.keys(g.funcs)];
      const hint = suggest(field, known, (s) => `"${operand.path}.${s}"`);
      return this.fail(`unknown attribute "${operand.path}.${field}"${hint}`, this.nameAt(e));
    }
    if (isMap(operand) && assignable(operand.key, T.string)) return operand.of;
    if (operand.k === "dyn") return T.dyn;
    return this.fail(`${typeName(operand)} has no field "${field}"`, this.nameAt(e));
  }

  call(c: Call, e: Expr): Type {
    const op = own(OPERATORS, c.function);
    if (op) return this.operator(op, c.args, e);
    if (/^[_@!-]/.test(c.function))
      this.fail(`operator ${c.function.replace(/_/g, " ").trim()} is not supported in IAM conditions`, this.op(e));
    if (!c.target) {
      const sig = own(GLOBALS, c.function);
      if (!sig)
        this.fail(
          `unknown function ${c.function}()${suggest(c.function, Object.keys(GLOBALS), (s) => `${s}()`)}; ` +
            `IAM conditions call functions on attributes (e.g. resource.name.startsWith(…))`,
          this.at(e),
        );
      return this.apply(c.function, sig, c.args, this.at(e));
    }
    const target = this.type(c.target);
    if (target.k === "group") {
      const funcs = own(GROUPS, target.path)!.funcs;
      if (c.function === "getAttribute" && target.path === "api") return this.getAttribute(c.args, e);
      const sig = own(funcs, c.function);
      if (!sig)
        this.fail(
          `unknown function ${target.path}.${c.function}()` +
            `${suggest(c.function, Object.keys(funcs), (s) => `${target.path}.${s}()`)}`,
          this.nameAt(e),
        );
      return this.apply(`${target.path}.${c.function}`, sig, c.args, this.nameAt(e));
    }
    if (target.k === "dyn") return this.dynMethod(c, e);
    const kind = isList(target) ? "list" : target.k;
    const methods = own(METHODS, kind) ?? {};
    const sig = own(methods, c.function);
    if (!sig) {
      const known = Object.keys(methods);
      const hint =
        suggest(c.function, known, (s) => `${s}()`) ||
        (known.length ? `; ${typeName(target)} has ${known.map((f) => `${f}()`).join(", ")}` : "");
      this.fail(`${c.function}() is not a function of ${typeName(target)} in IAM conditions${hint}`, this.nameAt(e));
    }
    if (TIME_PARTS.includes(c.function))
      return this.apply(c.function, c.args.length === 0 ? sig : [T.string, ...sig], c.args, this.nameAt(e));
    if (c.function === "hasOnly" && isList(target))
      return this.apply(c.function, [T.list(target.of), T.bool], c.args, this.nameAt(e));
    return this.apply(c.function, sig, c.args, this.nameAt(e));
  }

  /**
   * A function called on a value of unknown type (dyn): any type's function of that name, its arguments checked as
   * values.
   */
  dynMethod(c: Call, e: Expr): Type {
    const declared = Object.values(METHODS)
      .map((m) => own(m, c.function))
      .filter((x): x is Type[] => x !== undefined);
    if (declared.length === 0) this.fail(`${c.function}() is not a function in IAM conditions`, this.nameAt(e));
    const sigs = TIME_PARTS.includes(c.function) ? [...declared, ...declared.map((s) => [T.string, ...s])] : declared;
    const args = c.args.map((a) => this.value(a));
    const fits = sigs.filter((s) => s.length === args.length + 1 && args.every((t, i) => assignable(s[i]!, t)));
    if (fits.length === 0)
      this.fail(
        `${c.function}() cannot take ${args.length ? args.map(typeName).join(", ") : "no argument"}`,
        this.nameAt(e),
      );
    const results = new Set(fits.map((s) => typeName(s[s.length - 1]!)));
    return results.size === 1 ? fits[0]![fits[0]!.length - 1]! : T.dyn;
  }

  /** Checks the arguments of `name` against `sig` (argument types then result type). */
  apply(name: string, sig: Type[], args: Expr[], offset: number): Type {
    const want = sig.slice(0, -1);
    const takes =
      want.length === 0
        ? "no argument"
        : `${want.length} argument${want.length > 1 ? "s" : ""} (${want.map(typeName).join(", ")})`;
    if (args.length !== want.length) this.fail(`${name}() takes ${takes}, not ${args.length}`, offset);
    args.forEach((a, i) => {
      const t = this.value(a);
      if (!assignable(want[i]!, t))
        this.fail(`${name}() expects ${typeName(want[i]!)}, not ${typeName(t)}`, this.start(a));
      const literal =
        a.exprKind.case === "constExpr" && a.exprKind.value.constantKind.case === "stringValue"
          ? a.exprKind.value.constantKind.value
          : undefined;
      const bad = literal !== undefined ? checkLiteral(name, i, literal) : undefined;
      if (bad) throw new Problem(bad, this.start(a), true);
    });
    return sig[sig.length - 1]!;
  }

  getAttribute(args: Expr[], e: Expr): Type {
    if (args.length !== 2)
      this.fail(
        `api.getAttribute() takes an attribute name and a default value, not ${args.length} argument(s)`,
        this.nameAt(e),
      );
    const [name, fallback] = args as [Expr, Expr];
    const nameType = this.value(name);
    if (!assignable(T.string, nameType))
      this.fail(
        `api.getAttribute() expects the attribute name as a string, not ${typeName(nameType)}`,
        this.start(name),
      );
    const given = this.value(fallback);
    const literal = name.exprKind.case === "constExpr" ? name.exprKind.value.constantKind.value : undefined;
    const known = typeof literal === "string" ? own(API_ATTRIBUTES, literal) : undefined;
    if (!known) return given;
    if (!assignable(known, given))
      this.fail(
        `the default value of "${literal}" must be ${typeName(known)}, not ${typeName(given)}`,
        this.start(fallback),
      );
    if (
      literal === "iam.googleapis.com/modifiedGrantsByRole" &&
      !(fallback.exprKind.case === "listExpr" && fallback.exprKind.value.elements.length === 0)
    ) {
      this.fail(`the default value of "${literal}" must be an empty list ([])`, this.start(fallback));
    }
    return known;
  }

  operator(op: string, args: Expr[], e: Expr): Type {
    const types = args.map((a) => this.value(a));
    const [a, b] = types as [Type, Type];
    const where = this.op(e);
    const mismatch = (hint = "") =>
      this.fail(`operator ${op} cannot take ${types.map(typeName).join(" and ")}${hint}`, where);
    switch (op) {
      case "&&":
      case "||":
      case "!":
        types.forEach(
          (t, i) =>
            assignable(T.bool, t) ||
            this.fail(`operator ${op} takes booleans, not ${typeName(t)}`, this.start(args[i]!)),
        );
        return T.bool;
      case "==":
      case "!=":
        return assignable(a, b) || assignable(b, a) ? T.bool : mismatch();
      case "<":
      case "<=":
      case ">":
      case ">=":
        return assignable(a, b) && types.every((t) => ORDERED.has(t.k) || t.k === "dyn") ? T.bool : mismatch();
      case "in":
        if (isList(b) && assignable(b.of, a)) return T.bool;
        if (isMap(b) && assignable(b.key, a)) return T.bool;
        return b.k === "dyn" ? T.bool : mismatch(" (in needs a value and a list of values of its type)");
      case "[]":
        return this.index(a, b, mismatch);
      case "?:":
        if (!assignable(T.bool, a))
          this.fail(`the condition of ?: must be a boolean, not ${typeName(a)}`, this.start(args[0]!));
        return assignable(types[1]!, types[2]!) ? types[1]! : assignable(types[2]!, types[1]!) ? types[2]! : mismatch();
      case "-":
        if (types.length === 1) return a.k === "int" || a.k === "double" || a.k === "dyn" ? a : mismatch();
        return this.arith(op, a, b, mismatch);
      default:
        if (own(ARITH, op)) return this.arith(op, a, b, mismatch);
        return this.fail(`operator ${op} is not supported in IAM conditions`, where);
    }
  }

  arith(op: string, a: Type, b: Type, mismatch: (hint?: string) => never): Type {
    const rows = ARITH[op]!;
    if (a.k === "dyn" || b.k === "dyn") {
      // The known side must be one that the operator takes.
      const known = a.k === "dyn" ? b : a;
      const side = a.k === "dyn" ? 1 : 0;
      if (isList(known) && op === "+") return known;
      const results = new Set(rows.filter((r) => r[side] === known.k).map((r) => r[2]));
      if (known.k === "dyn" || results.size > 1) return T.dyn;
      return results.size === 1 ? T.scalar([...results][0]!) : mismatch();
    }
    const r = rows.find(([x, y]) => x === a.k && y === b.k);
    if (r) return T.scalar(r[2]);
    if (isList(a) && isList(b) && op === "+" && (assignable(a.of, b.of) || assignable(b.of, a.of))) return a;
    return mismatch(
      a.k === "timestamp" || b.k === "timestamp" ? ': a timestamp takes + or - a duration, e.g. duration("3600s")' : "",
    );
  }

  index(a: Type, b: Type, mismatch: (hint?: string) => never): Type {
    if (isList(a) && assignable(T.int, b)) return a.of;
    if (isMap(a) && assignable(a.key, b)) return a.of;
    return a.k === "dyn" ? T.dyn : mismatch(" ([] indexes a list by int or a map by key)");
  }
}

/** The first reason Google would refuse `expression` as an IAM condition, or undefined if it would accept it. */
export function checkCondition(expression: string): ConditionProblem | undefined {
  let parsed: Parsed;
  try {
    parsed = parse(expression);
  } catch (e) {
    return parseProblem(expression, e as Error);
  }
  if (!parsed.expr) return { message: "condition expression is empty", offset: 0 };
  const checker = new Checker(expression, (parsed.sourceInfo?.positions ?? {}) as Record<string, number>);
  try {
    const t = checker.value(parsed.expr);
    const start = expression.length - expression.trimStart().length;
    if (!assignable(T.bool, t))
      return { message: `a condition must be a boolean expression; this one is ${typeName(t)}`, offset: start };
    return undefined;
  } catch (e) {
    if (e instanceof Problem)
      return { message: e.message, offset: e.offset, ...(e.neverGrants ? { neverGrants: true as const } : {}) };
    throw e;
  }
}
