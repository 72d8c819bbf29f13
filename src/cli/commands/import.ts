import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { stringify } from "yaml";
import { UserError } from "../../diagnostics/diagnostic.js";
import { openCloud } from "../../engine/cloud.js";
import { retryPrinter } from "../render/retry-text.js";
import { kindOfName, parseFullName } from "../../cloud/names.js";
import { ENDPOINT_IAM_MEMBER, RESTORE_PLAN_IAM_BINDING } from "../../drivers/registry.js";
import { newState } from "../../state/index.js";
import type { Policy } from "../../generated/schemas.js";
import { normalizeMembers } from "../../iam/members.js";
import { canonicalCondition } from "../../iam/conditions.js";
import { addStackOptions, action, EXIT, loadOrExit, stateDirOf, underLock, writeOut, type StackOptions } from "../common.js";

interface ImportOptions extends StackOptions {
  generate?: boolean;
  out?: string;
  endpoint?: string;
  seed?: string;
  stackName?: string;
}

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

/** Builds a stack that adopts every binding of the given policies. Pure. */
export function generateStack(stackName: string, endpoint: string, policies: { name: string; policy: Policy }[]): Record<string, unknown> {
  const resources: Record<string, unknown> = {};
  const used = new Set<string>();
  const first = policies[0] ? (parseFullName("restorePlan", policies[0].name) ?? parseFullName("endpoint", policies[0].name)) : undefined;
  for (const { name, policy } of policies) {
    const kind = kindOfName(name);
    const short = name.split("/").pop()!;
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
    for (const b of policy.bindings ?? []) {
      const condition = canonicalCondition(b.condition);
      const title = condition ? ` ${condition.title}` : "";
      if (kind === "restorePlan") {
        resources[readableName([short, b.role, ...(condition ? [condition.title] : [])], used)] = {
          type: RESTORE_PLAN_IAM_BINDING,
          properties: { name, role: b.role, members: normalizeMembers(b.members), ...(condition ? { condition } : {}) },
          options: { import: `${name} ${b.role}${title}` },
        };
      } else {
        for (const m of normalizeMembers(b.members)) {
          resources[readableName([short, b.role, m, ...(condition ? [condition.title] : [])], used)] = {
            type: ENDPOINT_IAM_MEMBER,
            properties: { name, role: b.role, member: m, ...(condition ? { condition } : {}) },
            options: { import: `${name} ${b.role} ${m}${title}` },
          };
        }
      }
    }
  }
  return {
    name: stackName,
    description: `Adopted by converge import --generate from ${policies.length} ${policies.length === 1 ? "policy" : "policies"}`,
    provider: { ...(first ? { project: first.project, location: first.location } : {}), ...(endpoint !== "google" ? { endpoint } : {}) },
    resources,
  };
}

export function registerImport(program: Command): void {
  const cmd = program
    .command("import")
    .argument("[args...]", "ADDRESS ID, or with --generate: the full names of restore plans and endpoints")
    .description("Adopt an existing grant into the state (nothing is written to the cloud)")
    .option("--generate", "write a stack that adopts every binding of the named restore plans and endpoints")
    .option("--out <file>", "with --generate: where to write the stack")
    .option("--endpoint <endpoint>", "with --generate: google (default), embedded or http://host:port", "google")
    .option("--seed <file>", "with --generate and --endpoint embedded: the emulator seed")
    .option("--stack-name <name>", "with --generate: the generated stack's name", "imported");
  addStackOptions(cmd).action(
    action(async (args: string[], o: ImportOptions) => {
      if (o.generate) {
        if (!args.length) throw new UserError({ severity: "error", summary: "import --generate needs the full names of the restore plans and endpoints to adopt" });
        if (!o.out) throw new UserError({ severity: "error", summary: "import --generate needs --out FILE" });
        for (const n of args) {
          const k = kindOfName(n);
          if (k !== "restorePlan" && k !== "endpoint") {
            throw new UserError({ severity: "error", summary: `"${n}" is not a full restore plan or endpoint name`, detail: "Expected projects/{project}/locations/{location}/restorePlans/{id} or …/endpoints/{id}." });
          }
        }
        const stateDir = o.state ? stateDirOf(resolve(o.state)) : resolve("state");
        const cloud = await openCloud({ endpoint: o.endpoint ?? "google", ...(o.seed ? { seed: resolve(o.seed) } : {}) }, { stateDir, stackName: o.stackName ?? "imported", emit: retryPrinter(o) });
        try {
          const policies = [];
          for (const name of args) {
            const kind = kindOfName(name) as "restorePlan" | "endpoint";
            const policy = await cloud.port.getIamPolicy(kind, name);
            if (!policy) throw new UserError({ severity: "error", summary: `${name} does not exist` });
            policies.push({ name, policy });
          }
          const stack = generateStack(o.stackName ?? "imported", o.endpoint ?? "google", policies);
          const header = `# yaml-language-server: $schema=https://converge.dev/schemas/stack.schema.json\n# Generated by converge import --generate. Review it, then run converge plan: it should show only imports.\n`;
          writeFileSync(resolve(o.out), header + stringify(stack, { lineWidth: 0 }));
          await writeOut(`Wrote ${Object.keys(stack.resources as object).length} resources adopting ${policies.length} ${policies.length === 1 ? "policy" : "policies"} to ${o.out}.\nRun \`converge plan -f ${o.out}\`: it should show only imports.\n`);
          return EXIT.ok;
        } finally {
          await cloud.close();
        }
      }
      if (args.length < 2) throw new UserError({ severity: "error", summary: "usage: converge import ADDRESS ID", detail: 'Binding ID: "{name} {role} [condition title]"; member ID: "{name} {role} {member} [condition title]".' });
      const [address, ...idParts] = args as [string, ...string[]];
      const id = idParts.join(" ");
      const loaded = loadOrExit(o);
      const decl = loaded.stack.resources.get(address);
      if (!decl) {
        throw new UserError({ severity: "error", summary: `no resource "${address}" in ${o.file}`, detail: "Declare the resource in the stack first; import records it in the state under that address." });
      }
      const d = decl.driver;
      const defaults = { project: loaded.stack.provider.project, location: loaded.stack.provider.location };
      const target = d.parseImportId(id, defaults);
      if (typeof target === "string") throw new UserError({ severity: "error", summary: `${address}: ${target}`, address });
      return underLock(loaded.store, "import", o, async () => {
        const state = (await loaded.store.read()) ?? newState(loaded.stack.name);
        if (state.resources.some((r) => r.address === address)) {
          throw new UserError({ severity: "error", summary: `${address} is already in the state`, detail: "To import it again, first forget it with `converge state rm " + address + "`." });
        }
        const cloud = await openCloud(loaded.stack.provider, { stateDir: stateDirOf(loaded.statePath), stackName: loaded.stack.name, emit: retryPrinter(o) });
        let policy: Policy | undefined;
        try {
          policy = await cloud.port.getIamPolicy(d.kind, target.name);
        } finally {
          await cloud.close();
        }
        if (!policy) throw new UserError({ severity: "error", summary: `${address}: cannot import: ${target.name} does not exist`, address });
        const adopted = d.adopt(target, policy);
        if (typeof adopted === "string") throw new UserError({ severity: "error", summary: `${address}: cannot import "${id}": ${adopted}`, address });
        state.resources.push({
          address,
          type: d.token,
          id: d.id(adopted),
          inputs: adopted as unknown as Record<string, unknown>,
          outputs: d.outputs(adopted, policy.etag ?? ""),
          dependencies: loaded.stack.graph.dependencies(address),
          ...(decl.options.protect ? { protect: true } : {}),
        });
        const written = await loaded.store.write(state);
        if (o.json) await writeOut(JSON.stringify({ imported: address, id: d.id(adopted), serial: written.serial }) + "\n");
        else await writeOut(`${address}: Import complete [id=${d.id(adopted)}]\n\nImport successful! The resource is now in the state; run converge plan to compare it with the stack.\n`);
        return EXIT.ok;
      });
    }),
  );
}
