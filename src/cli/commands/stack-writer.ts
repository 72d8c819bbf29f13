// The stack file `import --generate` and `import --from-pulumi|--from-terraform` write: its
// document, its name, where it goes (refused where a file or a state stands) and its target.
import { existsSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import { stringify } from "yaml";
import { UserError } from "../../diagnostics/diagnostic.js";
import { withoutCredentials } from "../../cloud/endpoint.js";
import { defaultStatePath } from "../../state/index.js";
import { fsError } from "../../fs/errors.js";
import { makeDirsSync, writablePath, type FileRole } from "../../fs/regular-files.js";
import { SCHEMAS_DIR, validate } from "../../schemas/index.js";
import { type StackOptions } from "../common.js";
import { commandTimeout, handlingTimeout } from "../deadline.js";

export interface ImportOptions extends StackOptions {
  generate?: boolean;
  fromPulumi?: string;
  fromTerraform?: string;
  out?: string;
  force?: boolean;
  name?: string;
  endpoint?: string;
  seed?: string;
  stackName?: string;
  as?: string;
  group?: boolean;
}

/** The state file a stack named `name` gets by default when its file is `out`. */
export function defaultStateOf(out: string, name: string): string {
  return defaultStatePath(dirname(resolve(out)), name);
}

/** Whether `name` fits the stack name pattern of schemas/stack.schema.json. */
function isStackName(name: string): boolean {
  return validate("stack.schema.json#/properties/name", name).length === 0;
}

/**
 * The out file's name without its extension, made to fit the stack name pattern: each run of
 * other characters becomes "-", and what cannot start or end a name is dropped
 * ("prod access.yaml" → "prod-access"). undefined when nothing is left.
 */
export function stackNameOfFile(file: string): string | undefined {
  const name = basename(file, extname(file))
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/-+$/, "");
  return name && isStackName(name) ? name : undefined;
}

/** The generated stack's name: --name (or its old spelling --stack-name), else from the out file. */
function generatedName(o: ImportOptions, out: string): string {
  const given = o.name ?? o.stackName;
  if (given !== undefined) {
    if (!isStackName(given)) {
      throw new UserError({
        severity: "error",
        summary: `--name "${given}" is not a valid stack name`,
        detail: "A stack name starts with a letter or digit and holds only letters, digits, _, . and -.",
      });
    }
    return given;
  }
  const derived = stackNameOfFile(out);
  if (!derived) {
    throw new UserError({
      severity: "error",
      summary: `cannot make a stack name from the file name ${out}`,
      detail: "Name the stack with --name NAME.",
    });
  }
  return derived;
}

const GENERATED_STACK: FileRole = {
  what: "generated stack file",
  detail:
    "import --generate writes the stack to a regular file (or where a symlink to one points): " +
    "it never replaces anything else. Name another file with --out.",
};

/** Refuses, before any cloud call, to overwrite --out or to give the new stack an existing state. */
function checkOutFile(out: string, name: string, force: boolean): void {
  if (force) return;
  if (existsSync(out)) throw outExists(out);
  const state = defaultStateOf(out, name);
  if (existsSync(state)) {
    throw new UserError({
      severity: "error",
      summary: `${state} already exists: the generated stack "${name}" would share another stack's state`,
      detail:
        `A stack named "${name}" already keeps its state beside ${out}. ` +
        "Choose another name with --name NAME, or pass --force if you are generating that stack again.",
    });
  }
}

function outExists(out: string): UserError {
  return new UserError({
    severity: "error",
    summary: `${out} already exists; import --generate does not overwrite it`,
    detail: "Pass --force to replace it, or choose another --out file.",
  });
}

/** A read that the command's --timeout abandons (the error then says so) instead of ending the process. */
export function readUntilTimeout<T>(read: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  return handlingTimeout(() => read(commandTimeout()?.signal));
}

/** Where a generated stack is written (where the --out symlinks lead) and its name; what import
 *  must not replace is refused before anything is read. */
export async function generatedTarget(
  o: ImportOptions,
  outFile: string,
): Promise<{ target: string; out: string; name: string }> {
  const target = await writablePath(outFile, GENERATED_STACK);
  const out = resolve(outFile);
  const name = generatedName(o, out);
  checkOutFile(out, name, o.force === true);
  return { target, out, name };
}

/** The generated stack's endpoint: credentials in an http://user:password@… endpoint are never
 *  written down. */
export const generatedEndpoint = (o: ImportOptions): string => withoutCredentials(o.endpoint ?? "google");

/** An embedded emulator's seed, named relative to the stack, which plans where it was written. */
export function generatedSeed(o: ImportOptions, target: string): string | undefined {
  return o.endpoint === "embedded" && o.seed ? relative(dirname(resolve(target)), resolve(o.seed)) : undefined;
}

/** Writes a generated stack: the schema (for the editor) named relative to it, then `comments`. */
export function writeStackFile(
  target: string,
  out: string,
  stack: Record<string, unknown>,
  force: boolean,
  comments: string[],
): void {
  const schema = relative(dirname(resolve(target)), join(SCHEMAS_DIR, "stack.schema.json"));
  const header = [`yaml-language-server: $schema=${schema}`, ...comments].map((l) => `# ${l}\n`).join("");
  try {
    makeDirsSync(dirname(resolve(target)));
    writeFileSync(target, header + stringify(stack, { lineWidth: 0 }), { flag: force ? "w" : "wx" });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") throw outExists(out);
    throw fsError(e, `write ${GENERATED_STACK.what}`, out);
  }
}
