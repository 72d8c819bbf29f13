// The stack as Terraform's configuration representation (`configuration` in the plan JSON) and the
// resource attributes the plan's changes are computed from (`relevant_attributes`), both from
// what a Plan records of the stack as written (plan.configuration, see plan-configuration.ts).
import type {
  ConfiguredResource,
  ConfiguredVariable,
  Plan,
  TfBlockExpressions,
  TfConfig,
  TfConfigResource,
  TfConfigVariable,
  TfExpression,
  TfResourceAttribute,
} from "../generated/schemas.js";
import { type Accessor, isTemplateError, parseTemplate, type Reference } from "../language/expressions.js";

/** The provider every converge type belongs to, as Terraform names providers. */
export const PROVIDER_KEY = "cloudnative";
export const PROVIDER_NAME = "converge.dev/converge/cloudnative";

/** Calls `fn` with every `${…}` reference in a value as written, in order. */
function eachReference(value: unknown, fn: (r: Reference) => void): void {
  if (typeof value === "string") {
    if (!value.includes("${")) return;
    const t = parseTemplate(value);
    if (!isTemplateError(t)) for (const p of t.parts) if (typeof p !== "string") fn(p);
  } else if (Array.isArray(value)) for (const v of value) eachReference(v, fn);
  else if (value && typeof value === "object") for (const v of Object.values(value)) eachReference(v, fn);
}

/** The value a literal stands for (`$$` is a "$"); undefined when it holds a reference. */
function constantOf(value: unknown): { value: unknown } | undefined {
  if (typeof value === "string") {
    if (!value.includes("$")) return { value };
    const t = parseTemplate(value);
    if (isTemplateError(t) || t.parts.some((p) => typeof p !== "string")) return undefined;
    return { value: t.parts.join("") };
  }
  if (Array.isArray(value)) {
    const items = value.map(constantOf);
    return items.every((i) => i !== undefined) ? { value: items.map((i) => i!.value) } : undefined;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value).map(([k, v]) => [k, constantOf(v)] as const);
    return entries.every(([, c]) => c !== undefined)
      ? { value: Object.fromEntries(entries.map(([k, c]) => [k, c!.value])) }
      : undefined;
  }
  return { value };
}

const step = (a: Accessor) =>
  a.kind === "index"
    ? `[${a.index}]`
    : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(a.name)
      ? `.${a.name}`
      : `[${JSON.stringify(a.name)}]`;

/** Terraform's expression representation: the constant, or every reference with each of its
 *  shorter steps (`lake.labels.owner`, `lake.labels`, `lake`), without repeats. */
function expressionOf(value: unknown): TfExpression {
  const constant = constantOf(value);
  if (constant) return { constant_value: constant.value };
  const references: string[] = [];
  const seen = new Set<string>();
  eachReference(value, (r) => {
    for (let n = r.path.length; n >= 0; n--) {
      const text = r.root + r.path.slice(0, n).map(step).join("");
      if (!seen.has(text)) {
        seen.add(text);
        references.push(text);
      }
    }
  });
  return { references };
}

/** A block's arguments: an expression each; a map written as such (a condition) is a nested
 *  block, which Terraform lists. */
function blockExpressions(args: Record<string, unknown>): TfBlockExpressions {
  const out: TfBlockExpressions = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] =
      v && typeof v === "object" && !Array.isArray(v)
        ? [blockExpressions(v as Record<string, unknown>)]
        : expressionOf(v);
  }
  return out;
}

const isInvoke = (v: ConfiguredVariable) => v.function !== undefined;

function configResource(r: ConfiguredResource): TfConfigResource {
  return {
    address: r.name,
    mode: "managed",
    type: r.type,
    name: r.name,
    provider_config_key: PROVIDER_KEY,
    expressions: blockExpressions(r.properties),
    schema_version: 0,
    ...(r.depends_on.length ? { depends_on: r.depends_on } : {}),
  };
}

function configDataSource(v: ConfiguredVariable): TfConfigResource {
  return {
    address: v.name,
    mode: "data",
    type: v.function!,
    name: v.name,
    provider_config_key: PROVIDER_KEY,
    expressions: blockExpressions(v.arguments ?? {}),
    schema_version: 0,
  };
}

/** Terraform's configuration representation of the stack the plan was made from. */
export function configurationOf(plan: Plan): TfConfig {
  const c = plan.configuration ?? {};
  const provider: Record<string, unknown> = {
    project: plan.provider.project,
    location: plan.provider.location,
    endpoint: plan.provider.endpoint,
    seed: plan.provider.seed,
  };
  const variables: Record<string, TfConfigVariable> = Object.create(null);
  for (const v of (c.variables ?? []).filter((v) => !isInvoke(v))) {
    const constant = constantOf(v.value);
    variables[v.name] = constant ? { default: constant.value } : {};
  }
  const outputs: TfConfig["root_module"]["outputs"] = Object.create(null);
  for (const [name, value] of Object.entries(c.outputs ?? {})) outputs[name] = { expression: expressionOf(value) };
  return {
    provider_config: {
      [PROVIDER_KEY]: {
        name: PROVIDER_KEY,
        full_name: PROVIDER_NAME,
        expressions: blockExpressions(Object.fromEntries(Object.entries(provider).filter(([, v]) => v !== undefined))),
      },
    },
    root_module: {
      outputs,
      resources: [
        ...(c.variables ?? []).filter(isInvoke).map(configDataSource),
        ...(c.resources ?? []).map(configResource),
      ],
      variables,
    },
  };
}

/**
 * Terraform's relevant_attributes: the attributes of resources and data sources that the
 * configuration of every change (a resource's, a deferred read's, an output's), other than a
 * no-op, refers to, directly or through plain variables. Sorted by resource, then attribute.
 */
export function relevantAttributes(plan: Plan): TfResourceAttribute[] {
  const c = plan.configuration ?? {};
  const plain = new Map((c.variables ?? []).filter((v) => !isInvoke(v)).map((v) => [v.name, v.value]));
  const invokes = new Map((c.variables ?? []).filter(isInvoke).map((v) => [v.name, v.arguments]));
  const resources = new Map((c.resources ?? []).map((r) => [r.name, r.properties]));
  const found = new Map<string, TfResourceAttribute>();
  const visited = new Set<string>();
  const follow = (value: unknown) =>
    eachReference(value, (r) => {
      if (plain.has(r.root)) {
        if (!visited.has(r.root)) {
          visited.add(r.root);
          follow(plain.get(r.root));
        }
        return;
      }
      if (!resources.has(r.root) && !invokes.has(r.root)) return;
      const attribute = r.path.map((a) => (a.kind === "index" ? a.index : a.name));
      found.set(JSON.stringify([r.root, attribute]), { resource: r.root, attribute });
    });
  for (const ch of plan.resource_changes) {
    if (ch.change.action === "no-op" && !ch.change.importing) continue;
    follow(ch.mode === "data" ? invokes.get(ch.address) : resources.get(ch.address));
  }
  for (const [name, oc] of Object.entries(plan.output_changes)) if (oc.action !== "no-op") follow(c.outputs?.[name]);
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
}
