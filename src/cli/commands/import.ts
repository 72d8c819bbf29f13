import { dirname, resolve } from "node:path";
import { Option, type Command } from "commander";
import { UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { openCloud } from "../../connect/cloud.js";
import { importGrant } from "../../engine/operations.js";
import { retryPrinter } from "../render/retry-text.js";
import { kindOfName } from "../../cloud/names.js";
import { isPolicyKind, kindLabel, OBJECT_KINDS, POLICY_KINDS, type PolicyKind } from "../../gcp/object-kinds.js";
import { adoptingDriver } from "../../drivers/registry.js";
import { canonicalBindings } from "../../iam/policy.js";
import type { IamDriver, Ownership } from "../../drivers/types.js";
import type { Policy } from "../../generated/schemas.js";
import { normalizeMembers } from "../../iam/members.js";
import { canonicalCondition } from "../../iam/conditions.js";
import { escapeLiteral } from "../../language/expressions.js";
import { ratesOf } from "../rate-option.js";
import { addStackOptions, action, callTimeoutOf, openStackOf, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";
import { durationMs } from "../deadline.js";
import {
  defaultStateOf,
  generatedEndpoint,
  generatedSeed,
  generatedTarget,
  type ImportOptions,
  readUntilTimeout,
  stackDocument,
  writeStackFile,
} from "./stack-writer.js";


/** --as: which IAM type the generated stack uses. */
function ownershipOf(as: string | undefined): Ownership {
  if (as === "policy" || as === "binding" || as === "member") return as;
  throw new UserError({ severity: "error", summary: `--as takes policy, binding or member, got "${as}"` });
}

/** "restore plans and endpoints": the objects whose policies import --generate adopts. */
const POLICY_OBJECTS = POLICY_KINDS.map((k) => `${kindLabel(k)}s`).join(" and ");

/** A readable, unique resource name: nightly_gkebackup_viewer, churn_aiplatform_user_dana… */
function readableName(parts: string[], used: Set<string>): string {
  const base = parts
    .map((p) => p.replace(/^roles\//, "").replace(/@.*$/, "").replace(/^[a-zA-Z]+:/, ""))
    .join("_")
    .replace(/[^A-Za-z0-9_]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^_|_$/g, "")
    .replace(/^(\d)/, "_$1");
  let name = base || "grant";
  for (let i = 2; used.has(name); i++) name = `${base}_${i}`;
  used.add(name);
  return name;
}

/** `value` with every string escaped for a stack's properties, which are interpolated. */
function literal<T>(value: T): T {
  if (typeof value === "string") return escapeLiteral(value) as T;
  if (Array.isArray(value)) return value.map(literal) as T;
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v)])) as T;
  return value;
}

/** Two bindings of one role whose conditions share a title cannot be told apart by an import ID. */
function checkConditionTitles(name: string, policy: Policy): void {
  const titles = new Map<string, string>();
  for (const b of policy.bindings ?? []) {
    if (!b.condition) continue;
    const k = `${b.role}\u0000${b.condition.title}`;
    if (titles.has(k) && titles.get(k) !== b.condition.expression) {
      throw new UserError({
        severity: "error",
        summary: `${name}: two ${b.role} bindings have the condition title "${b.condition.title}"`,
        detail: "Import IDs name a condition by its title, so these bindings cannot be adopted unambiguously. Give the conditions distinct titles first.",
      });
    }
    titles.set(k, b.condition.expression);
  }
}

/** The resources that adopt one policy: one whole-policy resource, one per binding, or one per member. */
function adoptingResources(name: string, policy: Policy, driver: IamDriver, used: Set<string>, group = false): [string, unknown][] {
  const short = name.split("/").pop()!;
  if (driver.ownership === "policy") {
    const bindings = canonicalBindings(policy.bindings ?? []);
    const audit = policy.auditConfigs?.length ? { auditConfigs: policy.auditConfigs } : {};
    return [[readableName([short, "policy"], used), { type: driver.token, properties: literal({ name, bindings, ...audit }), options: { import: name } }]];
  }
  checkConditionTitles(name, policy);
  const out: [string, unknown][] = [];
  // A binding without members grants nothing: there is nothing to adopt.
  for (const b of (policy.bindings ?? []).filter((x) => x.members.length > 0)) {
    const condition = canonicalCondition(b.condition);
    const cond = condition ? { condition } : {};
    const title = condition ? ` ${condition.title}` : "";
    const titled = condition ? [condition.title] : [];
    if (driver.ownership === "binding") {
      out.push([readableName([short, b.role, ...titled], used), { type: driver.token, properties: literal({ name, role: b.role, members: normalizeMembers(b.members), ...cond }), options: { import: `${name} ${b.role}${title}` } }]);
      continue;
    }
    if (group) {
      // One member resource per binding, an instance per member (options.forEach).
      const forEach = literal(normalizeMembers(b.members));
      out.push([readableName([short, b.role, ...titled], used), { type: driver.token, properties: { ...literal({ name, role: b.role }), member: "${each.value}", ...literal(cond) }, options: { forEach, import: `${escapeLiteral(`${name} ${b.role} `)}\${each.value}${escapeLiteral(title)}` } }]);
      continue;
    }
    for (const m of normalizeMembers(b.members)) {
      out.push([readableName([short, b.role, m, ...titled], used), { type: driver.token, properties: literal({ name, role: b.role, member: m, ...cond }), options: { import: `${name} ${b.role} ${m}${title}` } }]);
    }
  }
  return out;
}

/** Builds a stack that adopts every binding of the given policies, as whole-policy, binding
 *  (the default) or member resources. Pure. */
export function generateStack(
  stackName: string,
  endpoint: string,
  policies: { name: string; policy: Policy }[],
  as: Ownership = "binding",
  group = false,
  seed?: string,
): Record<string, unknown> {
  const resources: Record<string, unknown> = {};
  const used = new Set<string>();
  for (const { name, policy } of policies) {
    const kind = kindOfName(name);
    if (!isPolicyKind(kind)) throw new Error(`generateStack: ${name} is not the name of an object with a policy`);
    for (const [key, value] of adoptingResources(name, policy, adoptingDriver(kind, as), used, group)) resources[key] = value;
  }
  const n = policies.length;
  const description = `Adopted by converge import --generate from ${n} ${n === 1 ? "policy" : "policies"}`;
  return stackDocument({ name: stackName, description, endpoint, seed, firstName: policies[0]?.name, resources });
}

/** `import --generate NAME… --out FILE`: writes a stack that adopts every binding of the named objects. */
async function generate(args: string[], o: ImportOptions): Promise<number> {
  const as = ownershipOf(o.as);
  if (o.group && as !== "member") throw new UserError({ severity: "error", summary: "--group is for --as member: it groups a role's members into one resource with forEach" });
  if (!args.length) throw new UserError({ severity: "error", summary: `import --generate needs the full names of the ${POLICY_OBJECTS} to adopt` });
  if (!o.out) throw new UserError({ severity: "error", summary: "import --generate needs --out FILE", detail: "The file's name also names the stack, unless --name NAME is given." });
  for (const n of args) {
    if (!isPolicyKind(kindOfName(n))) {
      const forms = POLICY_KINDS.map((k, i) => `${i === 0 ? "projects/{project}/locations/{location}" : "…"}/${OBJECT_KINDS[k].collection}/{id}`);
      throw new UserError({ severity: "error", summary: `"${n}" is not a full ${POLICY_KINDS.map(kindLabel).join(" or ")} name`, detail: `Expected ${forms.join(" or ")}.` });
    }
  }
  const { target, out, name } = await generatedTarget(o, o.out);
  // The embedded emulator keeps its world beside the state the generated stack will use.
  const stateDir = dirname(o.state ? resolve(o.state) : defaultStateOf(out, name));
  const cloud = await openCloud({ endpoint: o.endpoint ?? "google", ...(o.seed ? { seed: resolve(o.seed) } : {}) }, { stateDir, stackName: name, emit: retryPrinter(o), callTimeoutMs: callTimeoutOf(o), rates: ratesOf(o) });
  try {
    const policies = [];
    for (const full of args) {
      const kind = kindOfName(full) as PolicyKind;
      const policy = await readUntilTimeout((signal) => cloud.port.getIamPolicy(kind, full, signal));
      if (!policy) throw new UserError({ severity: "error", summary: `${full} does not exist` });
      policies.push({ name: full, policy });
    }
    const stack = generateStack(name, generatedEndpoint(o), policies, as, o.group === true, generatedSeed(o, target));
    const made = "Generated by converge import --generate. " +
      "Review it, then run converge plan: it should show only imports.";
    writeStackFile(target, out, stack, o.force === true, [made]);
    await writeOut(`Wrote ${Object.keys(stack.resources as object).length} resources adopting ${policies.length} ${policies.length === 1 ? "policy" : "policies"} to ${o.out} (stack "${name}").\nRun \`converge plan -f ${o.out}\`: it should show only imports.\n`);
    return EXIT.ok;
  } finally {
    await cloud.close();
  }
}

export function registerImport(program: Command): void {
  const cmd = program
    .command("import")
    .argument("[args...]", `ADDRESS ID, or with --generate: the full names of the ${POLICY_OBJECTS}`)
    .description("Adopt an existing grant into the state (nothing is written to the cloud)")
    .option("--generate", `write a stack that adopts every binding of the named ${POLICY_OBJECTS}`)
    .option("--from-pulumi <file>", "write a stack adopting the resources of a `pulumi stack export` (version 3)")
    .option("--from-terraform <file>", "write a stack adopting a Terraform state's (v4, or `terraform show -json`)")
    .option("--out <file>", "with --generate or --from-…: where to write the stack (an existing one only with --force)")
    .option("--force", "with --generate or --from-…: overwrite --out, or reuse the state of a stack of that name")
    .option(
      "--name <name>",
      "with --generate or --from-…: the generated stack's name (default: the --out file's name without its extension)",
    )
    .addOption(new Option("--stack-name <name>", "the old spelling of --name").hideHelp())
    .option("--endpoint <endpoint>", "with --generate: google (default), embedded or http://host:port", "google")
    .option("--seed <file>", "with --generate and --endpoint embedded: the emulator seed")
    .option("--as <kind>", "with --generate: adopt each policy as one whole-policy resource, a resource per binding, or one per member (policy, binding or member)", "binding")
    .option("--group", "with --generate --as member: one resource per role, with an instance per member (options.forEach)");
  addStackOptions(cmd).action(
    action(async (args: string[], o: ImportOptions) => {
      if (o.fromPulumi !== undefined || o.fromTerraform !== undefined) {
        // Loaded when used: the migration's module uses this one's writer.
        return (await import("./import-from-state.js")).importFromState(args, o);
      }
      if (o.generate) return generate(args, o);
      if (args.length < 2) throw new UserError({ severity: "error", summary: "usage: converge import ADDRESS ID", detail: 'Policy ID: "{name}"; binding ID: "{name} {role} [condition title]"; member ID: "{name} {role} {member} [condition title]".' });
      const [address, ...idParts] = args as [string, ...string[]];
      const id = idParts.join(" ");
      const loaded = await openStackOf(o);
      const request = { callTimeoutMs: callTimeoutOf(o), rates: ratesOf(o), emit: retryPrinter(o), reading: readUntilTimeout };
      const lockTimeout = durationMs(o.lockTimeout);
      const done = await importGrant(loaded, address, id, request, lockTimeout !== undefined ? { lockTimeoutMs: lockTimeout } : {});
      if (o.json) await writeOut(jsonText({ imported: address, id: done.id, serial: done.serial }) + "\n");
      else await writeOut(`${terminalText(`${address}: Import complete [id=${done.id}]`)}\n\nImport successful! The resource is now in the state; run converge plan to compare it with the stack.\n`);
      return EXIT.ok;
    }),
  );
}
