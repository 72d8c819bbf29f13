// Variables and data sources (fn::invoke): a literal value is resolved; an invoke whose arguments
// are known is read now (the direct form), one whose arguments wait on apply becomes a deferred
// read (`<= read`, the output form).
import type { ResourceChange } from "../generated/schemas.js";
import { kindLabel } from "../gcp/object-kinds.js";
import type { VariableDecl } from "../config/model.js";
import { error } from "../diagnostics/diagnostic.js";
import { UNKNOWN, containsUnknown } from "../language/expressions.js";
import { resolveValue } from "../language/resolve.js";
import { plain, secretStrings } from "../language/sensitive.js";
import { formatPath } from "../yaml/source.js";
import { validate } from "../schemas/index.js";
import { statusOf } from "../contracts/cloud-port.js";
import type { PlanContext } from "./context.js";

export async function planVariable(ctx: PlanContext, v: VariableDecl): Promise<void> {
  const src = ctx.stack.source;
  if (!v.invoke) {
    const value = resolveValue(v.value, ["variables", v.name], ctx.scope, src, ctx.diags);
    ctx.values.set(v.name, value);
    secretStrings(value, ctx.secrets);
    if (!containsUnknown(value)) ctx.variables[v.name] = plain(value);
    return;
  }
  const at = ["variables", v.name, "fn::invoke", "arguments"];
  const args = plain(resolveValue(v.invoke.arguments, at, ctx.scope, src, ctx.diags)) as Record<string, unknown>;
  if (containsUnknown(args)) return deferRead(ctx, v);
  const name = objectToRead(ctx, v, args, at);
  if (name === undefined) return void ctx.values.set(v.name, UNKNOWN);
  await readNow(ctx, v, name);
}

/** The read waits for values known only during apply. */
function deferRead(ctx: PlanContext, v: VariableDecl): void {
  const invoke = v.invoke!;
  ctx.values.set(v.name, UNKNOWN);
  const change: ResourceChange = {
    address: v.name,
    mode: "data",
    type: invoke.token,
    name: v.name,
    dependencies: ctx.stack.graph.dependencies(v.name),
    change: {
      action: "read",
      before: null,
      after: null,
      after_unknown: true,
      before_sensitive: false,
      after_sensitive: false,
    },
    action_reason: "read_because_dependency_pending",
    config: { function: invoke.token, arguments: invoke.arguments },
  };
  ctx.changes.push(change);
}

/** The full name of the object the invoke reads, or undefined after reporting why not. */
function objectToRead(
  ctx: PlanContext,
  v: VariableDecl,
  args: Record<string, unknown>,
  at: (string | number)[],
): string | undefined {
  const src = ctx.stack.source;
  const invoke = v.invoke!;
  const argErrors = validate(invoke.driver.argsSchema, args);
  for (const e of argErrors) {
    const p = [...at, ...e.instancePath.split("/").filter(Boolean)];
    const pos = src.position(p);
    ctx.diags.push(
      error(`${v.name}: argument ${formatPath(p.slice(at.length)) || "arguments"} ${e.message}`, {
        file: src.file,
        line: pos.line,
        column: pos.column,
        path: formatPath(p),
        address: v.name,
      }),
    );
  }
  if (argErrors.length) return undefined;
  const named = invoke.driver.objectName(args, ctx.defaults);
  if ("name" in named) return named.name;
  const p = [...at, ...named.problem.path];
  const pos = src.position(p);
  ctx.diags.push(
    error(`${v.name}: ${named.problem.message}`, {
      file: src.file,
      line: pos.line,
      column: pos.column,
      path: formatPath(p),
      address: v.name,
    }),
  );
  return undefined;
}

async function readNow(ctx: PlanContext, v: VariableDecl, name: string): Promise<void> {
  const invoke = v.invoke!;
  const src = ctx.stack.source;
  const t0 = Date.now();
  ctx.emit({ type: "read", address: v.name, token: invoke.token, object: name, phase: "start" });
  try {
    const result = await ctx.limit(() => invoke.driver.read(ctx.cloud, name, ctx.opts.signal));
    ctx.emit({ type: "read", address: v.name, token: invoke.token, object: name, phase: "done", ms: Date.now() - t0 });
    ctx.values.set(v.name, result);
    ctx.variables[v.name] = result;
  } catch (e) {
    ctx.emit({ type: "read", address: v.name, token: invoke.token, object: name, phase: "error", ms: Date.now() - t0 });
    const notFound = statusOf(e) === "NOT_FOUND";
    const what = `${kindLabel(invoke.driver.kind)} ${name}`;
    ctx.diags.push(
      error(notFound ? `${v.name}: ${what} does not exist` : `${v.name}: cannot read ${what}`, {
        address: v.name,
        detail: (e as Error).message,
        file: src.file,
        ...src.position(["variables", v.name]),
      }),
    );
    ctx.values.set(v.name, UNKNOWN);
  }
}
