// Output<T>: a value a program passes between resources, in Pulumi's model. It is known while the
// program runs (a plain value, a config value, a direct invoke's result, an output-form invoke
// read at once, a resource's input echoed as its output) or known only later (what a resource or
// a deferred invoke produces), which the program turns into the `${…}` interpolation a YAML stack
// would write: the same pipeline then resolves it at plan time or during apply. An output may be
// pending (a Promise, an invoke being read): the program's stack document is made once every
// pending output it used has settled (./context.ts).
import { escapeLiteral, formatReference, type Accessor } from "../language/expressions.js";
import { hasLoad, hasPending, loaded, registerOutputs, settled } from "./output-settle.js";
import { DEFERRED_APPLY, deferApply } from "./deferred.js";

export { hasPending, settled } from "./output-settle.js";

/** Marks outputs; a symbol from the global registry, so two copies of the package agree. */
const BRAND = Symbol.for("converge.sdk.output");

type Ref = { root: string; path: Accessor[] };
export type Expr =
  /** Known now; `ref` is where it comes from in the stack (kept in the document, so the plan shows it). */
  | { kind: "known"; value: unknown; ref?: Ref }
  /** `load`: reads the root's value while the program runs, when a function needs it (an invoke). */
  | ({ kind: "ref"; load?: () => Promise<unknown> } & Ref)
  | { kind: "template"; parts: unknown[] }
  | { kind: "list"; items: unknown[] }
  | { kind: "secret"; inner: Output<unknown> }
  | { kind: "json"; inner: unknown }
  | { kind: "pending"; promise: Promise<Output<unknown>> }
  /** `.apply` on a value known only during apply: callback `id` (./deferred.ts) runs on `source` then. */
  | { kind: "deferred"; id: number; source: Output<unknown> };

interface OutputMethods<T> {
  /** Runs `fn` on the value once it is known: now for a value known while the program runs (or
   *  once its promise settles); during apply for a value known only then (the plan shows the
   *  result as known after apply; it can be a stack output, not a resource's input). */
  apply<U>(fn: (value: T) => U | Output<U> | Promise<U>): Output<U>;
  /** The `${…}` form of this output as it goes into the stack document. */
  toString(): string;
}

/** Property access on an output gives an output of the property (`lake.endpointUri`). */
type Lifted<T> = T extends string | number | boolean | null | undefined
  ? unknown
  : T extends readonly (infer E)[]
    ? { readonly [i: number]: Output<E> }
    : { readonly [K in keyof T]-?: Output<T[K]> };

export type Output<T> = OutputMethods<T> & Lifted<T>;
/** A plain value, a promise or an output of it, deeply: what constructor and invoke arguments accept. */
export type Input<T> = T | Output<T> | Promise<T>;
export type Inputs<T> = { [K in keyof T]: InputOf<T[K]> };
/** A field's value: the value or an output of it, or (for a list or an object) one whose parts are. */
type InputOf<V> =
  | Input<V>
  | (NonNullable<V> extends readonly (infer E)[]
      ? readonly InputOf<E>[]
      : NonNullable<V> extends string | number | boolean
        ? never
        : NonNullable<V> extends object
          ? Inputs<NonNullable<V>>
          : never);

interface Internal {
  [BRAND]: Expr;
}

/** Why `.apply` cannot run now: made by ./context.ts as a positioned diagnostic. */
export class UnknownApplyError extends Error {}

export function isOutput(v: unknown): v is Output<unknown> {
  return (
    (typeof v === "object" || typeof v === "function") && v !== null && (v as Partial<Internal>)[BRAND] !== undefined
  );
}

export function exprOf(o: Output<unknown>): Expr {
  return (o as unknown as Internal)[BRAND];
}

function isPromise(v: unknown): v is Promise<unknown> {
  return (
    v instanceof Promise ||
    (typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function")
  );
}

function step(key: string): Accessor {
  return /^(0|[1-9]\d*)$/.test(key) ? { kind: "index", index: Number(key) } : { kind: "prop", name: key };
}

function child(expr: Expr, key: string): Expr {
  switch (expr.kind) {
    case "known": {
      const v = expr.value as Record<string, unknown> | null | undefined;
      const value = v !== null && typeof v === "object" && Object.hasOwn(v, key) ? v[key] : undefined;
      return {
        kind: "known",
        value,
        ...(expr.ref
          ? {
              ref: { root: expr.ref.root, path: [...expr.ref.path, step(key)] },
            }
          : {}),
      };
    }
    case "ref":
      return { ...expr, path: [...expr.path, step(key)] };
    case "list": {
      const item = /^(0|[1-9]\d*)$/.test(key) ? expr.items[Number(key)] : undefined;
      return exprOf(output(item));
    }
    case "secret":
      return { kind: "secret", inner: make(child(exprOf(expr.inner), key)) };
    case "pending":
      return {
        kind: "pending",
        promise: expr.promise.then((o) => make(child(exprOf(o), key))),
      };
    case "deferred": {
      const id = deferApply((v) => (v as Record<string, unknown> | null)?.[key]);
      return { kind: "deferred", id, source: make(expr) };
    }
    default:
      throw new TypeError(`a ${expr.kind === "json" ? "JSON text" : "interpolated string"} has no property "${key}"`);
  }
}

/** The value of an output known now, else undefined (`{ value }` so an undefined value is known). */
export function knownValue(o: unknown): { value: unknown } | undefined {
  if (!isOutput(o)) return isPromise(o) ? undefined : { value: o };
  const e = exprOf(o);
  switch (e.kind) {
    case "known":
      return { value: e.value };
    case "secret":
      return knownValue(e.inner);
    case "list": {
      const values = e.items.map(knownValue);
      return values.every((v) => v) ? { value: values.map((v) => v!.value) } : undefined;
    }
    case "template": {
      const parts = e.parts.map((p, i) => (i % 2 === 0 ? { value: p } : knownValue(p)));
      return parts.every((p) => p)
        ? {
            value: parts.map((p, i) => (i % 2 ? asText(p!.value) : p!.value)).join(""),
          }
        : undefined;
    }
    case "json": {
      const v = knownDeep(e.inner);
      return v && { value: JSON.stringify(v.value) };
    }
    default:
      return undefined;
  }
}

/** A value whose parts may be outputs, as plain data when every part is known now. */
export function knownDeep(v: unknown): { value: unknown } | undefined {
  const k = isOutput(v) ? knownValue(v) : isPromise(v) ? undefined : { value: v };
  if (!k) return undefined;
  const x = k.value;
  if (Array.isArray(x)) {
    const parts = x.map(knownDeep);
    return parts.every((p) => p) ? { value: parts.map((p) => p!.value) } : undefined;
  }
  if (x !== null && typeof x === "object" && !isOutput(x)) {
    const entries = Object.entries(x).map(([a, b]) => [a, knownDeep(b)] as const);
    return entries.every(([, p]) => p)
      ? { value: Object.fromEntries(entries.map(([a, p]) => [a, p!.value])) }
      : undefined;
  }
  return isOutput(x) ? knownDeep(x) : { value: x };
}

/** A known value whose parts may be known outputs, as plain data. */
function plainDeep(v: unknown): unknown {
  const k = isOutput(v) ? knownValue(v)?.value : v;
  if (Array.isArray(k)) return k.map(plainDeep);
  if (k !== null && typeof k === "object")
    return Object.fromEntries(Object.entries(k).map(([a, b]) => [a, plainDeep(b)]));
  return k;
}

function isSecret(e: Expr): boolean {
  const anySecret = (vs: unknown[]) => vs.some((v) => isOutput(v) && isSecret(exprOf(v)));
  if (e.kind === "template") return anySecret(e.parts.filter((_, i) => i % 2 === 1));
  if (e.kind === "json") return anySecret([e.inner]);
  if (e.kind === "deferred") return anySecret([e.source]);
  return e.kind === "secret" || (e.kind === "list" && anySecret(e.items));
}

let unknownApply: ((o: Output<unknown>) => Output<unknown> | "defer" | undefined) | undefined;

/** What `.apply` gives for a value not known while the program runs: a command that does not call
 *  the cloud (validate, graph) reads no invoke, so it takes the source as is; plan and apply defer
 *  the function to apply ("defer"); outside a program (undefined) it is an error. */
export function onUnknownApply(hook: (o: Output<unknown>) => Output<unknown> | "defer" | undefined): void {
  unknownApply = hook;
}

function applyNow<T, U>(self: Output<T>, fn: (value: T) => U | Output<U> | Promise<U>): Output<U> {
  const e = exprOf(self);
  const known = knownDeep(self);
  if (!known && hasPending(self)) {
    return make<U>({
      kind: "pending",
      promise: settled(self).then((o) => applyNow(o as Output<T>, fn) as Output<unknown>),
    });
  }
  if (!known && hasLoad(self)) {
    // An invoke whose arguments wait on apply: read during apply, and `fn` run then.
    const later = (e: unknown) => {
      if (e instanceof UnknownApplyError && unknownApply?.(self) === "defer") return deferred(self, fn);
      throw e;
    };
    return make<U>({
      kind: "pending",
      promise: loaded(self).then((o) => applyNow(o as Output<T>, fn) as Output<unknown>, later),
    });
  }
  if (!known) {
    const standIn = unknownApply?.(self);
    if (standIn === "defer") return deferred(self, fn);
    if (standIn) return standIn as Output<U>;
    const what = String(encode(self));
    throw new UnknownApplyError(
      `${what}.apply(…): the value is known only during apply, and a program's function cannot run then`,
    );
  }
  const r = output(fn(known.value as T) as Input<U>);
  return isSecret(e) ? secret(r) : r;
}

/** `fn` run during apply, once the value of `self` is known there (its result known then too). */
function deferred<T, U>(self: Output<T>, fn: (value: T) => U | Output<U> | Promise<U>): Output<U> {
  const id = deferApply(async (value) => {
    const r = await settled(output(fn(value as T) as Input<U>));
    const known = knownDeep(r);
    if (!known) throw new Error("the function gave a value that is still not known");
    return known.value;
  });
  return make<U>({ kind: "deferred", id, source: self });
}

function make<T>(expr: Expr): Output<T> {
  const methods: OutputMethods<T> & Internal = {
    [BRAND]: expr,
    apply<U>(fn: (value: T) => U | Output<U> | Promise<U>): Output<U> {
      return applyNow(proxy, fn);
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

/** An output of a value (or the output itself); a Promise's output is pending until it settles. */
export function output<T>(value: Input<T>): Output<T> {
  if (isOutput(value)) return value as Output<T>;
  if (isPromise(value))
    return make<T>({
      kind: "pending",
      promise: Promise.resolve(value).then((v) => output(v)),
    });
  return make<T>({ kind: "known", value });
}

/** An output known now whose source in the stack is `root` and `path` (kept in the document). */
export function knownOutput<T>(value: unknown, root: string, path: string[] = []): Output<T> {
  return make<T>({ kind: "known", value, ref: { root, path: path.map(step) } });
}

/** An output made from an expression (./invokes.ts, ./context.ts). */
export function outputOf<T>(expr: Expr): Output<T> {
  return make<T>(expr);
}

/** An output referring to `root` (an invoke of the stack) whose value `load` reads when a function needs it. */
export function loadableOutput<T>(root: string, load: () => Promise<unknown>): Output<T> {
  let value: Promise<unknown> | undefined;
  return make<T>({ kind: "ref", root, path: [], load: () => (value ??= load()) });
}

/** An output referring to `root` (a resource or a variable of the stack) and a path into it. */
export function referenceOutput<T>(root: string, path: string[] = []): Output<T> {
  return make<T>({ kind: "ref", root, path: path.map(step) });
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

/** An output whose value is secret: shown as (sensitive) on every channel. */
export function secret<T>(value: Input<T>): Output<T> {
  const o = output(value);
  return exprOf(o).kind === "secret" ? o : make<T>({ kind: "secret", inner: o });
}

/** The value of a secret output, no longer marked secret. */
export function unsecret<T>(value: Output<T>): Output<T> {
  const e = exprOf(value);
  return e.kind === "secret" ? (e.inner as Output<T>) : value;
}

/** Whether an output is secret. */
export function isSecretOutput(value: Output<unknown>): boolean {
  return isSecret(exprOf(value));
}

/** JSON text of a value whose parts may be outputs (`fn::toJSON` when some are known later). */
export function jsonStringify(value: Input<unknown>): Output<string> {
  return make<string>({ kind: "json", inner: value });
}

/** A value known now as a string inside a template. */
function asText(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
}

function encodeExpr(expr: Expr): unknown {
  switch (expr.kind) {
    case "known":
      return expr.ref ? `\${${formatReference(expr.ref)}}` : encode(expr.value);
    case "ref":
      return `\${${formatReference(expr)}}`;
    case "list":
      return expr.items.map(encode);
    case "secret":
      return { "fn::secret": encode(expr.inner) };
    case "json": {
      const known = knownValue(make(expr));
      return known ? escapeLiteral(known.value as string) : { "fn::toJSON": encode(expr.inner) };
    }
    case "pending":
      throw new TypeError("a pending output reached the stack document before it settled");
    case "deferred":
      return { [DEFERRED_APPLY]: [expr.id, encode(expr.source)] };
    case "template": {
      // A secret part makes the whole text secret: fn::secret around it.
      const text = expr.parts
        .map((p, i) => {
          if (i % 2 === 0) return escapeLiteral(p as string);
          const known = knownValue(p);
          if (known && !(isOutput(p) && exprOf(p).kind === "known" && (exprOf(p) as { ref?: Ref }).ref))
            return escapeLiteral(asText(plainDeep(known.value)));
          const e = encode(p);
          return String(e !== null && typeof e === "object" && "fn::secret" in e ? e["fn::secret"] : e);
        })
        .join("");
      return isSecret(expr) ? { "fn::secret": text } : text;
    }
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

registerOutputs({ isOutput, exprOf, outputOf: (expr) => outputOf(expr) });
