// Pulumi's resource options in a program: each one converge honours becomes the option a YAML stack
// writes (dependsOn, protect, ignoreChanges, import, retainOnDelete; aliases as `moved:`; provider
// as the resource's full name; parent's provider and protect inherited); any other is refused with
// an error at the constructor's call site, never dropped.
import { completeName } from "../cloud/names.js";
import { resourceDriver } from "../drivers/registry.js";
import type { CallSite } from "./call-site.js";
import type { ProgramBuilder } from "./context.js";
import { exprOf, isOutput, knownValue, settled } from "./output.js";

/** A provider: the project and region (location) its resources' short names are completed with. */
export class Provider {
  readonly project: string | undefined;
  readonly region: string | undefined;
  constructor(
    readonly providerName: string,
    args: {
      project?: string;
      region?: string;
      zone?: string;
      [other: string]: unknown;
    } = {},
  ) {
    this.project = args.project;
    this.region = args.region ?? (args.zone ? args.zone.replace(/-[a-z]$/, "") : undefined);
    const refused = Object.keys(args).filter(
      (k) => !["project", "region", "zone"].includes(k) && args[k] !== undefined,
    );
    if (refused.length) this.refused = refused;
  }
  /** Provider arguments converge cannot honour per resource (reported where it is used). */
  readonly refused: string[] | undefined;
}

/** The options every resource type takes (Pulumi's names). */
export interface ResourceOptions<I = Record<string, unknown>> {
  /** Resources (or their names) this one waits for: one, a list, or an output or promise of them. */
  dependsOn?: unknown;
  /** A protected resource is never deleted or replaced. */
  protect?: boolean;
  /** Inputs whose changes in the live cloud are not planned back. */
  ignoreChanges?: readonly (keyof I & string)[];
  /** The ID of an existing grant to adopt instead of creating it. */
  import?: string;
  /** Destroying (or removing) the resource forgets it: its grant stays in the cloud. */
  retainOnDelete?: boolean;
  /** Earlier names of this resource (a name, `{ name }`, or a URN ending in `::name`): a rename. */
  aliases?: readonly (string | { name?: string })[];
  /** The project and region this resource's short name is completed with. */
  provider?: Provider;
  /** A resource whose provider and protect this one inherits. */
  parent?: { resourceName: string; options?: ResourceOptions };
  [other: string]: unknown;
}

/** Options converge honours; the rest are refused. */
const HONOURED = new Set([
  "dependsOn",
  "protect",
  "ignoreChanges",
  "import",
  "retainOnDelete",
  "aliases",
  "provider",
  "parent",
]);

const WHY: Record<string, string> = {
  deleteBeforeReplace:
    "converge orders a replacement itself: on one object the old grant is revoked and the new one made in one " +
    "write; across objects the new grant comes first, so access is never lost",
  replaceOnChanges:
    "converge decides replacements from the type: an input that names the policy replaces, others update in place",
  customTimeouts: "every call of a run shares one deadline: use --timeout or the call timeout of the command",
  additionalSecretOutputs:
    "mark the input secret instead (secret(…) or config.getSecret): its outputs are then secret too",
};

/** Names of the resources a dependsOn value (resources, names, outputs or promises of them) refers to. */
async function dependencyNames(value: unknown): Promise<string[]> {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (v === undefined || v === null) return;
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (isOutput(v)) {
      const e = exprOf(v);
      if (e.kind === "ref") out.push(e.root);
      else if (e.kind === "known" && e.ref) out.push(e.ref.root);
      else if (e.kind === "known") walk(e.value);
      else if (e.kind === "list") e.items.forEach(walk);
      else if (e.kind === "template") e.parts.forEach((p, i) => i % 2 === 1 && walk(p));
      else if (e.kind === "secret") walk(e.inner);
    } else if (typeof v === "object" && typeof (v as { resourceName?: unknown }).resourceName === "string") {
      out.push((v as { resourceName: string }).resourceName);
    }
  };
  walk(await settled(value));
  return [...new Set(out)];
}

/** The resource's name completed with a provider's project and region (a known name only). */
function nameFor(
  b: ProgramBuilder,
  type: string,
  args: Record<string, unknown>,
  p: Provider,
  site: CallSite | undefined,
): unknown {
  const named = knownValue(args.name);
  const kind = resourceDriver(type)?.kind;
  if (!named || typeof named.value !== "string" || !kind) {
    b.diagnostics.push(
      b.errorAt(
        site,
        `provider ${p.providerName}: the resource's name must be known while the program runs`,
        "A provider completes a short name with its project and region.",
      ),
    );
    return args.name;
  }
  const s = b.stack.provider;
  const full = completeName(kind, named.value, {
    project: p.project ?? s.project,
    location: p.region ?? s.location,
  });
  if (typeof full === "string") b.diagnostics.push(b.errorAt(site, `provider ${p.providerName}: ${full}`));
  return typeof full === "string" ? args.name : full.full;
}

function aliasName(a: string | { name?: string }): string | undefined {
  const n = typeof a === "string" ? a : a.name;
  return n === undefined ? undefined : n.slice(n.lastIndexOf("::") + (n.includes("::") ? 2 : 0));
}

/**
 * The options of `new T(name, args, opts)` as the stack document holds them (a dependsOn may be
 * pending: the builder settles it), and the args with a provider's name. A refused option is an
 * error at `site`.
 */
export function resourceOptions(
  b: ProgramBuilder,
  name: string,
  type: string,
  args: Record<string, unknown>,
  opts: ResourceOptions | undefined,
  site: CallSite | undefined,
) {
  const options: Record<string, unknown> = {};
  if (!opts) return { options, args };
  for (const [k, v] of Object.entries(opts)) {
    if (v === undefined || HONOURED.has(k)) continue;
    const why = WHY[k] ?? "converge has no such option";
    b.diagnostics.push(
      b.errorAt(
        site,
        `resource option ${k} is not supported by converge: ${why}`,
        "Remove the option; converge refuses options it cannot honour rather than ignore them.",
      ),
    );
  }
  const parent = opts.parent?.options;
  if (opts.dependsOn !== undefined) options.dependsOn = dependencyNames(opts.dependsOn);
  const protect = opts.protect ?? parent?.protect;
  if (protect !== undefined) options.protect = protect;
  if (opts.ignoreChanges?.length) options.ignoreChanges = [...opts.ignoreChanges];
  if (opts.import !== undefined) options.import = opts.import;
  if (opts.retainOnDelete !== undefined) options.retainOnDelete = opts.retainOnDelete;
  for (const a of opts.aliases ?? []) {
    const from = aliasName(a);
    if (from === undefined || from === name) continue;
    b.addMove(from, name, site);
  }
  const provider = opts.provider ?? parent?.provider;
  if (!provider) return { options, args };
  if (provider.refused)
    b.diagnostics.push(
      b.errorAt(
        site,
        `provider ${provider.providerName}: ${provider.refused.join(", ")} cannot be set per resource`,
        "A provider gives a resource its project and region; the endpoint and credentials are the stack's.",
      ),
    );
  return {
    options,
    args: { ...args, name: nameFor(b, type, args, provider, site) },
  };
}
