// converge init: a starter stack in a folder (YAML, or a TypeScript program with --typescript)
// against the embedded emulator, a .gitignore for state and saved plans, and with --ci github a
// workflow that plans on pull requests and applies the reviewed plan on merge (beside an existing
// stack, --ci adds only the workflow). The files are the package's templates/init/; nothing is
// overwritten (a .gitignore gets the lines it lacks).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Command, Option } from "commander";
import { UserError } from "../../diagnostics/diagnostic.js";
import { PACKAGE_ROOT } from "../../base/version.js";
import { action, withExamples } from "../common.js";

interface InitOptions {
  typescript?: boolean;
  ci?: "github";
  name?: string;
}

const TEMPLATES = new URL("templates/init/", PACKAGE_ROOT);
const CI_HELP = "also write a CI workflow that plans on pull requests and applies on merge";
const STACK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function template(file: string, values: Record<string, string>): string {
  return readFileSync(new URL(file, TEMPLATES), "utf8").replace(/\{\{(\w+)\}\}/g, (_, k: string) => values[k] ?? "");
}

/** The stack's name: --name, else the folder's name made valid, else "main". */
function stackName(dir: string, given: string | undefined): string {
  if (given !== undefined) {
    if (!STACK_NAME.test(given)) {
      const detail = "A stack name is letters, digits, _, . and -, starting with a letter or digit.";
      throw new UserError({ severity: "error", summary: `--name "${given}" is not a stack name`, detail });
    }
    return given;
  }
  const made = basename(resolve(dir))
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "");
  return made || "main";
}

/** The stack schema of this package, as a path relative to `dir` (for yaml-language-server). */
function schemaPath(dir: string): string {
  const path = relative(resolve(dir), fileURLToPath(new URL("schemas/stack.schema.json", PACKAGE_ROOT)));
  return path.startsWith(".") ? path : `./${path}`;
}

/** The lines of `wanted` that `existing` lacks, appended to it. */
function withLines(existing: string, wanted: string): string {
  const have = new Set(existing.split("\n").map((l) => l.trim()));
  const missing = wanted.split("\n").filter((l) => l.trim() && !have.has(l.trim()));
  if (!missing.length) return existing;
  return `${existing}${existing && !existing.endsWith("\n") ? "\n" : ""}${existing ? "\n" : ""}${missing.join("\n")}\n`;
}

/** The files init writes in `dir`, by path relative to it. */
function filesOf(dir: string, o: InitOptions): Map<string, string> {
  const name = stackName(dir, o.name);
  const stack = o.typescript ? "stack.ts" : "stack.yaml";
  const files = new Map<string, string>([
    [stack, template(stack, { name, schema: schemaPath(dir) })],
    ["cloud.seed.yaml", template("cloud.seed.yaml", {})],
  ]);
  const file = o.typescript ? "-f stack.ts " : "";
  const workflow = join(".github", "workflows", "converge.yml");
  if (o.ci === "github") files.set(workflow, template("github-workflow.yml", { file }));
  return files;
}

export function runInit(dir: string, o: InitOptions): string {
  const files = filesOf(dir, o);
  // --ci beside a stack made before: the workflow is added, the stack and its seed kept.
  const stackExists = existsSync(join(dir, o.typescript ? "stack.ts" : "stack.yaml"));
  const kept = o.ci && stackExists ? [...files.keys()].slice(0, 2).filter((f) => existsSync(join(dir, f))) : [];
  for (const f of [...files.keys()].slice(0, 2)) if (o.ci && stackExists) files.delete(f);
  const taken = [...files.keys()].filter((f) => existsSync(join(dir, f)));
  if (taken.length) {
    throw new UserError({
      severity: "error",
      summary: `${taken.join(", ")} already ${taken.length === 1 ? "exists" : "exist"} in ${resolve(dir)}`,
      detail:
        "converge init overwrites nothing: run it in a new folder, or move those files away. Nothing was written.",
    });
  }
  for (const [file, text] of files) {
    mkdirSync(join(dir, file, ".."), { recursive: true }); // dir too, when missing
    writeFileSync(join(dir, file), text, { flag: "wx" });
  }
  const ignore = join(dir, ".gitignore");
  const before = existsSync(ignore) ? readFileSync(ignore, "utf8") : "";
  const after = withLines(before, template("gitignore", {}));
  if (after !== before) writeFileSync(ignore, after);
  const written = [...files.keys()];
  if (after !== before) written.push(before ? ".gitignore (added converge's lines)" : ".gitignore");
  const where = relative(process.cwd(), resolve(dir));
  const cd = where ? `cd ${where} && ` : "";
  const plan = `${cd}npx converge plan${o.typescript ? " -f stack.ts" : ""}`;
  const keptLine = kept.length ? `Kept ${kept.join(", ")}.\n` : "";
  const next = `Next: ${plan}   # what apply would change, against the embedded emulator\n`;
  return `${keptLine}Wrote ${written.join(", ")}.\n${next}`;
}

export function registerInit(program: Command): void {
  const cmd = program
    .command("init")
    .argument("[dir]", "the folder to write the stack in (made if missing)", ".")
    .description("Write a starter stack, a .gitignore for state and saved plans, and optionally a CI workflow")
    .option("--typescript", "a TypeScript program stack (stack.ts) instead of YAML")
    .addOption(new Option("--ci <provider>", CI_HELP).choices(["github"]))
    .option("--name <name>", "the stack's name (default: the folder's name)");
  withExamples(cmd, ["converge init", "converge init --typescript", "converge init --ci github"]);
  cmd.action(
    action(async (dir: string, o: InitOptions) => {
      process.stdout.write(runInit(dir, o));
    }),
  );
}
