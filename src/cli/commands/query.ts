// `converge query --project P [--location L…]`: discovery. Lists the project's restore plans and
// endpoints with their policies and says which grants the stack's state manages (read-only: no
// lock, no state write); `--generate --out FILE` writes a stack adopting the chosen objects'
// unmanaged grants, with import --generate's writer. The operation is the engine's (queryProject).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { Option, type Command } from "commander";
import { error, UserError } from "../../diagnostics/diagnostic.js";
import { adoptablePolicies, checkDiscoverRequest, kindOf } from "../../engine/discover.js";
import { queryProject, type QueryRequest, type QueryResult, type QueryTarget } from "../../engine/query.js";
import { withoutCredentials } from "../../cloud/endpoint.js";
import { ratesOf } from "../rate-option.js";
import { retryPrinter } from "../render/retry-text.js";
import { queryJson, queryText } from "../render/query-text.js";
import { addStackOptions, action, callTimeoutOf, openStackOf, parallelismOf, withExamples } from "../common.js";
import { writeJsonOut, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";
import { generateStack } from "../../engine/stack-generation.js";
import { generatedTarget, type ImportOptions, readUntilTimeout, writeStackFile } from "./stack-writer.js";

interface QueryOptions extends ImportOptions {
  project?: string;
  location?: string[];
  kind?: string[];
  nameGlob?: string;
  role?: string;
}

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

function requestOf(o: QueryOptions): QueryRequest {
  const req: QueryRequest = {
    project: o.project ?? "",
    locations: o.location ?? [],
    kinds: (o.kind ?? []).map(kindOf),
    nameGlob: o.nameGlob,
    role: o.role,
    parallelism: parallelismOf(o),
    callTimeoutMs: callTimeoutOf(o),
    rates: ratesOf(o),
  };
  checkDiscoverRequest(req);
  return req;
}

/** Refuses what cannot go together, before anything is read. */
function checkOptions(o: QueryOptions, stackFound: boolean): void {
  const bad = (summary: string, detail?: string): never => {
    throw new UserError(error(summary, detail ? { detail } : {}));
  };
  if (o.generate && !o.out) bad("query --generate needs --out FILE");
  if (o.out && !o.generate) bad("--out is for --generate: the stack file to write");
  if (o.as === "policy") {
    bad(
      "query --generate adopts grants as binding or member resources",
      "A filtered or partly managed policy cannot be adopted whole: use import --generate --as policy NAME….",
    );
  }
  if (o.as !== "binding" && o.as !== "member") bad(`--as takes binding or member, got "${o.as}"`);
  if (o.group && o.as !== "member") bad("--group is for --as member");
  if (stackFound && o.endpoint !== undefined) {
    bad(`--endpoint is for a query without a stack; ${o.file}'s provider says where its cloud is`);
  }
  if (o.seed !== undefined && o.endpoint !== "embedded") bad("--seed is for --endpoint embedded");
}

/** The stack whose state marks the managed grants: -f, or stack.yaml when it exists. */
async function targetOf(o: QueryOptions, stackFound: boolean): Promise<QueryTarget> {
  if (stackFound) return { session: await openStackOf(o) };
  const endpoint = o.endpoint ?? "google";
  return {
    endpoint,
    ...(o.seed !== undefined ? { seed: resolve(o.seed) } : {}),
    // An embedded emulator's world is made from the seed in a directory of its own, removed after.
    stateDir: endpoint === "embedded" ? mkdtempSync(join(tmpdir(), "converge-query-")) : resolve("state"),
    stackName: "query",
  };
}

type Written = Awaited<ReturnType<typeof generatedTarget>>;

/** `--generate --out FILE`: a stack of resources importing the chosen objects' unmanaged grants. */
async function generate(o: QueryOptions, result: QueryResult, target: QueryTarget, written: Written): Promise<void> {
  const as = o.as as "binding" | "member";
  const { policies, skipped } = adoptablePolicies(result.report, as);
  if (skipped > 0) {
    process.stderr.write(`Left out ${skipped} grants whose binding the state already manages in part.\n`);
  }
  if (policies.length === 0)
    return void process.stderr.write("No unmanaged grants: nothing to adopt, no file written.\n");
  const { target: file, out, name } = written;
  const provider =
    "session" in target ? target.session.stack.provider : { endpoint: target.endpoint, seed: target.seed };
  const endpoint = withoutCredentials(provider.endpoint);
  const seed = provider.endpoint === "embedded" && provider.seed ? relativeSeed(file, provider.seed) : undefined;
  const stack = generateStack(name, endpoint, policies, as, o.group === true, seed);
  stack.description = `Adopted by converge query --generate from project ${result.report.project}`;
  writeStackFile(file, out, stack, o.force === true, [
    "Generated by converge query --generate. Review it, then run converge plan: it should show only imports.",
  ]);
  const count = Object.keys(stack.resources as object).length;
  process.stderr.write(
    `Wrote ${count} resources adopting grants of ${policies.length} objects to ${o.out} (stack "${name}").\n`,
  );
}

/** The seed named from the generated stack's directory: it plans where it was written. */
function relativeSeed(file: string, seed: string): string {
  return relative(dirname(resolve(file)), resolve(seed));
}

async function runQuery(o: QueryOptions): Promise<number> {
  const stackFound = existsSync(o.file) || o.file !== "stack.yaml";
  checkOptions(o, stackFound);
  const req = requestOf(o);
  // What --generate must not replace is refused before anything is read.
  const written = o.generate ? await generatedTarget(o, o.out!) : undefined;
  const target = await targetOf(o, stackFound);
  try {
    const emit = retryPrinter({ json: o.json === true });
    const result = await readUntilTimeout((signal) => queryProject(target, req, emit, signal));
    if (o.json) await writeJsonOut(queryJson(result));
    else await writeOut(queryText(result));
    if (written) await generate(o, result, target, written);
    return EXIT.ok;
  } finally {
    if ("endpoint" in target && target.endpoint === "embedded")
      rmSync(target.stateDir, { recursive: true, force: true });
  }
}

export function registerQuery(program: Command): void {
  const cmd = program
    .command("query")
    .description("Discover a project's restore plans and endpoints, their grants, and which are managed (read-only)");
  addStackOptions(cmd, { lock: false });
  withExamples(cmd, [
    "converge query --project my-project                       # every location",
    "converge query --project my-project --location us-central1 --json",
    "converge query --project my-project --kind endpoints --role 'roles/aiplatform.*'",
    "converge query --project my-project --name-glob 'nightly-*' --generate --out adopted.yaml",
  ]);
  cmd
    .option("--project <project>", "the project to discover (its ID)")
    .addOption(
      new Option("--location <location>", "a location to list (repeatable; default: every location)").argParser(
        collect,
      ),
    )
    .addOption(new Option("--kind <kind>", "restorePlans or endpoints (repeatable; default: both)").argParser(collect))
    .option("--name-glob <glob>", "only objects whose ID (or, with a '/', full name) matches")
    .option("--role <glob>", "only grants of matching roles")
    .option("--generate", "write a stack adopting the chosen objects' unmanaged grants to --out")
    .option("--out <file>", "with --generate: the stack file to write")
    .option("--force", "with --generate: overwrite --out")
    .option("--name <name>", "with --generate: the generated stack's name (default: from --out)")
    .option("--as <kind>", "with --generate: a resource per binding or per member (binding or member)", "binding")
    .option("--group", "with --generate --as member: one resource per role, an instance per member")
    .option("--endpoint <endpoint>", "without a stack: google (default), embedded or http://host:port")
    .option("--seed <file>", "with --endpoint embedded: the emulator seed")
    .action(action((o: QueryOptions) => runQuery(o)));
}
