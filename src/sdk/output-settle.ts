// Outputs waiting on something the program can wait for: Promises and pending outputs (settled
// before the stack document is made), and invoke results read when a function needs them.
// ./output.ts gives this module its primitives (registerOutputs) when it loads: it imports this
// module, and an import back would close a loop.
type Output<T> = { readonly __output?: T } & object;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyExpr = any;

interface OutputPrimitives {
  isOutput(v: unknown): v is Output<unknown>;
  exprOf(o: Output<unknown>): AnyExpr;
  outputOf(expr: AnyExpr): Output<unknown>;
}

let prims: OutputPrimitives | undefined;

/** Called once by ./output.ts with its primitives. */
export function registerOutputs(p: OutputPrimitives): void {
  prims = p;
}

const isOutput = (v: unknown): v is Output<unknown> => prims!.isOutput(v);
const exprOf = (o: Output<unknown>): AnyExpr => prims!.exprOf(o);
const outputOf = (expr: AnyExpr): Output<unknown> => prims!.outputOf(expr);

const isPromise = (v: unknown): v is Promise<unknown> =>
  typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

/** Whether a value holds a Promise or a pending output (deeply). */
export function hasPending(v: unknown): boolean {
  if (isOutput(v)) {
    const e = exprOf(v);
    if (e.kind === "pending") return true;
    if (e.kind === "known") return hasPending(e.value);
    if (e.kind === "list") return hasPending(e.items);
    if (e.kind === "template") return hasPending(e.parts);
    if (e.kind === "secret" || e.kind === "json") return hasPending(e.inner);
    return false;
  }
  if (isPromise(v)) return true;
  if (Array.isArray(v)) return v.some(hasPending);
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.values(v).some(hasPending);
  return false;
}

/** Whether an output refers to a value it can read now (deeply). */
export function hasLoad(v: unknown): boolean {
  if (!isOutput(v)) return Array.isArray(v) ? v.some(hasLoad) : false;
  const e = exprOf(v);
  if (e.kind === "ref") return e.load !== undefined;
  if (e.kind === "list") return e.items.some(hasLoad);
  if (e.kind === "template") return e.parts.some(hasLoad);
  if (e.kind === "secret") return hasLoad(e.inner);
  return false;
}

/** The output with each readable reference in it read (a known value from where it was read). */
export async function loaded(v: unknown): Promise<unknown> {
  if (!isOutput(v)) return Array.isArray(v) ? Promise.all(v.map(loaded)) : v;
  const e = exprOf(v);
  switch (e.kind) {
    case "ref": {
      if (!e.load) return v;
      let value = await e.load();
      for (const a of e.path)
        value = (value as Record<string, unknown> | undefined)?.[a.kind === "prop" ? a.name : a.index];
      return outputOf({ kind: "known", value, ref: { root: e.root, path: e.path } });
    }
    case "list":
      return outputOf({ kind: "list", items: (await loaded(e.items)) as unknown[] });
    case "template":
      return outputOf({ kind: "template", parts: (await loaded(e.parts)) as unknown[] });
    case "secret":
      return outputOf({ kind: "secret", inner: (await loaded(e.inner)) as Output<unknown> });
    default:
      return v;
  }
}

/** `value` with every Promise and pending output in it settled (deeply), so `encode` can take it. */
export async function settled(value: unknown): Promise<unknown> {
  if (isPromise(value)) return settled(await value);
  if (isOutput(value)) {
    const e = exprOf(value);
    if (e.kind === "pending") return settled(await e.promise);
    if (e.kind === "secret")
      return outputOf({
        kind: "secret",
        inner: (await settled(e.inner)) as Output<unknown>,
      });
    if (e.kind === "list")
      return outputOf({
        kind: "list",
        items: (await settled(e.items)) as unknown[],
      });
    if (e.kind === "template")
      return outputOf({
        kind: "template",
        parts: (await settled(e.parts)) as unknown[],
      });
    if (e.kind === "json") return outputOf({ kind: "json", inner: await settled(e.inner) });
    if (e.kind === "known" && hasPending(e.value)) return outputOf({ ...e, value: await settled(e.value) });
    return value;
  }
  if (Array.isArray(value)) return Promise.all(value.map(settled));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await settled(v)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}
