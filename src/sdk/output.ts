// Output<T>: a value a program passes between resources. It is known now (a plain value, a
// direct invoke's result) or a reference to what a resource or an invoke produces, which the
// program turns into the `${…}` interpolation a YAML stack would write: the same pipeline then
// resolves it at plan time or during apply.
import { escapeLiteral, formatReference, type Accessor } from "../config/expressions.js";

/** Marks outputs; a symbol from the global registry, so two copies of the package agree. */
const BRAND = Symbol.for("converge.sdk.output");

type Expr = { kind: "known"; value: unknown } | { kind: "ref"; root: string; path: Accessor[] } | { kind: "template"; parts: unknown[] };

interface OutputMethods<T> {
  /** Runs `fn` on the value. Only for a value known while the program runs: a value known only
   *  during apply cannot be handed to a function (use property access or `interpolate`). */
  apply<U>(fn: (value: T) => U | Output<U>): Output<U>;
  /** The `${…}` form of this output as it goes into the stack document. */
  toString(): string;
}

/** Property access on an output gives an output of the property (`lake.endpointUri`). */
type Lifted<T> = T extends string | number | boolean | null | undefined ? unknown : T extends readonly (infer E)[] ? { readonly [i: number]: Output<E> } : { readonly [K in keyof T]-?: Output<T[K]> };

export type Output<T> = OutputMethods<T> & Lifted<T>;
/** A plain value or an output of it, deeply: what constructor and invoke arguments accept. */
export type Input<T> = T | Output<T>;
export type Inputs<T> = { [K in keyof T]: InputOf<T[K]> };
/** A field's value: the value or an output of it, or (for a list or an object) one whose parts are. */
type InputOf<V> = Input<V> | (NonNullable<V> extends readonly (infer E)[] ? readonly InputOf<E>[] : NonNullable<V> extends string | number | boolean ? never : NonNullable<V> extends object ? Inputs<NonNullable<V>> : never);

interface Internal {
  [BRAND]: Expr;
}

export function isOutput(v: unknown): v is Output<unknown> {
  return (typeof v === "object" || typeof v === "function") && v !== null && (v as Partial<Internal>)[BRAND] !== undefined;
}

function exprOf(o: Output<unknown>): Expr {
  return (o as unknown as Internal)[BRAND];
}

function child(expr: Expr, key: string): Expr {
  const index = /^(0|[1-9]\d*)$/.test(key);
  if (expr.kind === "known") {
    const v = expr.value as Record<string, unknown> | null | undefined;
    return { kind: "known", value: v !== null && typeof v === "object" && Object.hasOwn(v, key) ? v[key] : undefined };
  }
  if (expr.kind === "ref") return { kind: "ref", root: expr.root, path: [...expr.path, index ? { kind: "index", index: Number(key) } : { kind: "prop", name: key }] };
  throw new TypeError(`an interpolated string has no property "${key}"`);
}

function make<T>(expr: Expr): Output<T> {
  const methods: OutputMethods<T> & Internal = {
    [BRAND]: expr,
    apply<U>(fn: (value: T) => U | Output<U>): Output<U> {
      if (expr.kind !== "known") {
        throw new TypeError(`${encode(proxy)}: apply needs a value known while the program runs; this one is known only during apply. Use property access or interpolate\`…\` instead.`);
      }
      const r = fn(expr.value as T);
      return isOutput(r) ? (r as Output<U>) : make<U>({ kind: "known", value: r });
    },
    toString: () => String(encode(proxy)),
  };
  const proxy = new Proxy(methods, {
    get(target, key, receiver) {
      if (typeof key === "symbol" || key === "apply" || key === "toString") return Reflect.get(target, key, receiver);
      // Not a promise: `await output` must not wait for a `then` property.
      if (key === "then" || key === "toJSON") return undefined;
      return make(child(expr, key));
    },
  }) as unknown as Output<T>;
  return proxy;
}

/** An output of a value known now (or the output itself). */
export function output<T>(value: Input<T>): Output<T> {
  return isOutput(value) ? (value as Output<T>) : make<T>({ kind: "known", value });
}

/** An output referring to `root` (a resource or a variable of the stack) and a path into it. */
export function referenceOutput<T>(root: string, path: string[] = []): Output<T> {
  return make<T>({ kind: "ref", root, path: path.map((name) => ({ kind: "prop", name })) });
}

/** A string built from text and outputs: interpolate`serviceAccount:${owner}@my-project.iam…`. */
export function interpolate(strings: TemplateStringsArray, ...values: unknown[]): Output<string> {
  const parts: unknown[] = [];
  strings.forEach((s, i) => {
    parts.push(s);
    if (i < values.length) parts.push(values[i]);
  });
  return make<string>({ kind: "template", parts });
}

/** A value known now as a string inside a template. */
function asText(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
}

function encodeExpr(expr: Expr): unknown {
  switch (expr.kind) {
    case "known":
      return encode(expr.value);
    case "ref":
      return `\${${formatReference(expr)}}`;
    case "template":
      return expr.parts
        .map((p, i) => {
          if (i % 2 === 0) return escapeLiteral(p as string);
          if (!isOutput(p)) return escapeLiteral(asText(p));
          const e = exprOf(p);
          return e.kind === "known" ? escapeLiteral(asText(e.value)) : String(encodeExpr(e));
        })
        .join("");
  }
}

/** A program's value as the stack document holds it: outputs become `${…}`, literal text has
 *  every "$" doubled (so it is never read as an interpolation), undefined fields are left out. */
export function encode(value: unknown): unknown {
  if (isOutput(value)) return encodeExpr(exprOf(value));
  if (typeof value === "string") return escapeLiteral(value);
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = encode(v);
    return out;
  }
  return value;
}
