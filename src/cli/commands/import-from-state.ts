// `converge import --from-pulumi EXPORT.json` / `--from-terraform STATE --out FILE`: reads another
// tool's state (no cloud call) and writes, with import --generate's writer, a stack whose first
// plan adopts every resource it could map; the rest are warned about and listed in the stack.
import { basename } from "node:path";
import { UserError, error, warning, type Diagnostic } from "../../diagnostics/diagnostic.js";
import { terminalText } from "../../diagnostics/terminal-text.js";
import { formatPath } from "../../yaml/source.js";
import { printDiagnostics, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";
import {
  generatedEndpoint,
  generatedSeed,
  generatedTarget,
  writeStackFile,
  type ImportOptions,
} from "./stack-writer.js";
import { stackDocument } from "../../engine/stack-generation.js";
import { readSourceFile, type SourceFile } from "../../migrate/file.js";
import { readPulumiExport } from "../../migrate/pulumi.js";
import { readTerraformState } from "../../migrate/terraform.js";
import { migratedStack, type MigratedStack, type Unmapped } from "../../migrate/stack.js";

const SOURCES = {
  pulumi: { flag: "--from-pulumi", what: "Pulumi export", tool: "Pulumi's" },
  terraform: { flag: "--from-terraform", what: "Terraform state", tool: "Terraform's" },
} as const;
type SourceKind = keyof typeof SOURCES;

function unmappedWarning(file: SourceFile, u: Unmapped): Diagnostic {
  const pos = file.src.position(u.path);
  return warning(`${u.address} (${u.type}) is not migrated: ${u.reason}`, {
    code: "migrate/unmapped",
    file: file.src.file,
    line: pos.line,
    column: pos.column,
    path: formatPath(u.path),
  });
}

/** The comments at the top of the stack: how it was made, its secret inputs, what was left out. */
function headerComments(kind: SourceKind, file: string, m: MigratedStack): string[] {
  const { flag, tool } = SOURCES[kind];
  const lines = [
    `Migrated by converge import ${flag} from ${basename(file)}. ` +
      "Review it, then run converge plan: it should show only imports.",
  ];
  const secrets = Object.keys(m.config);
  if (secrets.length)
    lines.push(
      `Secret inputs (secrets in ${tool} state, never written here): ` +
        `give each with --var NAME=VALUE or CONVERGE_VAR_NAME: ${secrets.join(", ")}`,
    );
  if (m.unmapped.length) {
    lines.push(`Not migrated (${m.unmapped.length}): these stay in ${tool} state, and in the cloud as they are:`);
    for (const u of m.unmapped) lines.push(`  ${u.address} (${u.type}): ${u.reason}`);
  }
  return lines.map(terminalText);
}

function checkArgs(args: string[], o: ImportOptions): { kind: SourceKind; file: string; out: string } {
  if (o.fromPulumi !== undefined && o.fromTerraform !== undefined)
    throw new UserError(error("give --from-pulumi or --from-terraform, not both"));
  const kind: SourceKind = o.fromPulumi !== undefined ? "pulumi" : "terraform";
  const { flag } = SOURCES[kind];
  if (o.generate) throw new UserError(error(`--generate reads the cloud and ${flag} reads a state: give one of them`));
  // Each resource keeps the kind it had in the file (policy, binding or member).
  if (o.group) throw new UserError(error(`--group is for --generate --as member, not for ${flag}`));
  if (args.length)
    throw new UserError(
      error(`import ${flag} FILE takes no other arguments, got "${args[0]}"`, {
        detail: "The resources to adopt are the file's.",
      }),
    );
  if (!o.out)
    throw new UserError(
      error(`import ${flag} needs --out FILE`, {
        detail: "The file's name also names the stack, unless --name NAME is given.",
      }),
    );
  return { kind, file: (kind === "pulumi" ? o.fromPulumi : o.fromTerraform)!, out: o.out };
}

/** `import --from-pulumi FILE | --from-terraform FILE --out STACK`. */
export async function importFromState(args: string[], o: ImportOptions): Promise<number> {
  const { kind, file: path, out: outFile } = checkArgs(args, o);
  const { target, out, name } = await generatedTarget(o, outFile);
  const file = readSourceFile(path, SOURCES[kind].what);
  const read = kind === "pulumi" ? readPulumiExport(file) : { resources: readTerraformState(file), notes: [] };
  const m = migratedStack(read.resources);
  printDiagnostics([...read.notes, ...m.unmapped.map((u) => unmappedWarning(file, u))]);
  const count = Object.keys(m.resources).length;
  if (count === 0) {
    throw new UserError(
      error(`${path} holds no resource converge can adopt`, {
        file: path,
        detail: "converge adopts the IAM types of restore plans and Vertex AI endpoints; nothing was written.",
      }),
    );
  }
  const plural = count === 1 ? "" : "s";
  const description = `Migrated by converge import ${SOURCES[kind].flag} from ${count} resource${plural}`;
  const stack = stackDocument({
    name,
    description,
    endpoint: generatedEndpoint(o),
    seed: generatedSeed(o, target),
    firstName: m.firstName,
    config: m.config,
    resources: m.resources,
  });
  writeStackFile(target, out, stack, o.force === true, headerComments(kind, path, m));
  const secrets = Object.keys(m.config);
  const lines = [
    `Wrote ${count} resource${count === 1 ? "" : "s"} adopted from ${path} to ${outFile} (stack "${name}").`,
    ...(m.unmapped.length ? [`${m.unmapped.length} not migrated (listed above and in the stack).`] : []),
    ...(secrets.length ? [`Give its secret inputs with --var or CONVERGE_VAR_…: ${secrets.join(", ")}.`] : []),
    `Run \`converge plan -f ${outFile}\`: it should show only imports.`,
  ];
  await writeOut(`${lines.map(terminalText).join("\n")}\n`);
  return EXIT.ok;
}
