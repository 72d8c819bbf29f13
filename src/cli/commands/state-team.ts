// The state commands of team state (issue 17): `state history`, `state pull`, `state push` and
// `state claims`. History and claims are optional capabilities of a backend: the local file
// keeps neither, and says so.
import { noStateError } from "../../engine/state-edits.js";
import { InputFileError, MAX_DATA_BYTES, readInputFile } from "../../fs/input-file.js";
import type { Command } from "commander";
import { error, UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { withStateLock } from "../../engine/session.js";
import type { State } from "../../generated/schemas.js";
import { describeClaim, redactClaim } from "../../claims/claims.js";
import { serializeState } from "../../state/format.js";
import { parseState } from "../../state/parse-state.js";
import { type HistoryRecord, type StateStore, versionOf } from "../../state/index.js";
import type { DriftEventRecord } from "../../state/store.js";
import { action, openedStateOf, type StateCommandOptions, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";
import { durationMs } from "../deadline.js";
import { maxOf } from "../../base/arrays.js";

interface TeamOptions extends StateCommandOptions {
  json?: boolean;
  lockTimeout?: string;
  serial?: string;
  force?: boolean;
}

/** What the local backend says where history would be. */
export function noHistory(file: string): string {
  return (
    `The local backend keeps no history: only the current state and the previous version (${file}.backup). ` +
    `Keep the state on PostgreSQL (backend: {type: postgres}) to keep every version, with who wrote it and why.`
  );
}

/** --serial as a whole number. */
export function serialOf(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new UserError(error(`--serial must be a whole number, got "${text}"`));
  return n;
}

/** The state at `serial` (the current one when undefined); a user error when there is none. */
export async function stateAt(store: StateStore, serial: number | undefined): Promise<State> {
  const current = await store.read();
  if (serial === undefined || current?.serial === serial) {
    if (current) return current;
    throw noStateError(store);
  }
  if (!store.version)
    throw new UserError(
      error(
        `serial ${serial} is not the current state (` +
          `${current ? `serial ${current.serial}` : "no state yet"}) of ` +
          `${store.describe()}`,
        { code: "state/no-history", detail: noHistory(store.describe()) },
      ),
    );
  const old = await store.version(serial);
  if (!old)
    throw new UserError(
      error(`no version with serial ${serial} in the history of ${store.describe()}`, {
        code: "state/no-version",
        detail: "converge state history lists the versions kept.",
      }),
    );
  return old;
}

/** A drift event as a history row: "drift found" or "drift gone", the finding in place of the plan. */
type DriftRow = Omit<HistoryRecord, "lineage" | "convergeVersion"> & { drift: DriftEventRecord["finding"] };

function driftRows(events: readonly DriftEventRecord[]): DriftRow[] {
  return events.map((e) => {
    const operation = e.event === "found" ? "drift found" : "drift gone";
    return { serial: e.serial, written: e.recorded, actor: e.actor, host: e.host, operation, drift: e.finding };
  });
}

/** The versions and the drift events, in the order they were written. */
async function historyOf(store: StateStore): Promise<(HistoryRecord | DriftRow)[]> {
  const versions: (HistoryRecord | DriftRow)[] = await store.history!();
  if (!store.drift) return versions;
  const all = versions.concat(driftRows(await store.drift.read()));
  // Stable: a version and an event of the same instant keep versions first.
  return all.sort((a, b) => (a.written < b.written ? -1 : a.written > b.written ? 1 : 0));
}

const driftSummary = (d: DriftRow["drift"]) => `${d.class}: ${d.member} ${d.role} on ${d.object}`;

function historyText(records: (HistoryRecord | DriftRow)[]): string {
  const rows = [["SERIAL", "WRITTEN", "ACTOR", "HOST", "OPERATION", "GRANTED", "REVOKED", "PLAN", "APPROVED"]];
  for (const r of records) {
    const plan = "drift" in r ? driftSummary(r.drift) : r.planDigest ? `${r.planDigest.slice(0, 19)}…` : "-";
    const access = "access" in r && r.access ? r.access : undefined;
    const counts = access ? [String(access.granted), String(access.revoked)] : ["-", "-"];
    const approvals = "approvals" in r ? r.approvals : undefined;
    const approved = approvals?.map((a) => `${a.rule} by ${a.actor}`).join(", ") ?? "-";
    rows.push([String(r.serial), r.written, r.actor, r.host, r.operation, counts[0]!, counts[1]!, plan, approved]);
  }
  const widths = rows[0]!.map((_, i) => maxOf(rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        terminalText(
          r
            .map((c, i) => c.padEnd(widths[i]!))
            .join("  ")
            .trimEnd(),
        ),
      )
      .join("\n") + "\n"
  );
}

async function history(o: TeamOptions): Promise<number> {
  const store = (await openedStateOf(o)).store;
  if (!store.history) {
    if (o.json) await writeOut("[]\n");
    process.stderr.write(`${noHistory(store.describe())}\n`);
    if (!o.json) await writeOut(`No history: ${store.describe()} is a local state file.\n`);
    return EXIT.ok;
  }
  const records = await historyOf(store);
  if (o.json) await writeOut(jsonText(records, 2) + "\n");
  else
    await writeOut(
      records.length ? historyText(records) : `No history yet: nothing was written to ${store.describe()}.\n`,
    );
  return EXIT.ok;
}

/**
 * The pushed state as the store will take it; refuses another stack, and without --force another lineage or an older
 * serial.
 */
function pushed(
  file: string,
  text: string,
  stack: string | undefined,
  current: State | undefined,
  force: boolean,
  target: string,
): State {
  const next = parseState(text, file, {
    label: "the file to push",
    advice:
      `Nothing was written: the current state (${target}) is unchanged. Correct ${file}, or ` +
      `push another state file (converge state pull writes one).`,
  });
  if (stack !== undefined && next.stack !== stack)
    throw new UserError(
      error(`${file} is a state of stack "${next.stack}", not of stack "${stack}"`, { code: "state/push", file }),
    );
  if (!current) return next;
  if (next.lineage !== current.lineage && !force) {
    throw new UserError(
      error(
        `${file} has lineage ${next.lineage}, the stored state ${current.lineage}: it is another state of this stack`,
        {
          code: "state/push",
          file,
          detail:
            "Nothing was written. Use --force to replace the stored state with it anyway (it keeps the " +
            "stored lineage, so every writer's compare-and-swap still holds).",
        },
      ),
    );
  }
  if (next.lineage === current.lineage && next.serial < current.serial && !force) {
    throw new UserError(
      error(`${file} has serial ${next.serial}, older than the stored serial ${current.serial}`, {
        code: "state/push",
        file,
        detail: "Nothing was written. Use --force to restore an older version (the history keeps the one it replaces).",
      }),
    );
  }
  return { ...next, lineage: current.lineage };
}

async function push(file: string, o: TeamOptions): Promise<number> {
  const opened = await openedStateOf(o);
  const { store } = opened;
  let text: string;
  try {
    text = readInputFile(file, "state file", MAX_DATA_BYTES).toString("utf8");
  } catch (e) {
    if (e instanceof InputFileError)
      throw e.userError({ code: "state/push", detail: `${e.detail} Nothing was written.` });
    throw new UserError(error(`cannot read ${file}: ${(e as Error).message}`, { code: "state/push", file }));
  }
  return withStateLock(store, "state push", durationMs(o.lockTimeout), async () => {
    const current = await store.read();
    const next = pushed(file, text, opened.stack, current, o.force === true, store.describe());
    const written = await store.write(next, versionOf(current), {
      operation: o.force ? "state push --force" : "state push",
    });
    await writeOut(`Pushed ${file} to ${store.describe()}: it is now serial ${written.serial}.\n`);
    return EXIT.ok;
  });
}

/** Rows as columns padded to their widest cell (two spaces between; the last is not padded). */
function alignedColumns(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, i) => maxOf(rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
}

async function claims(o: TeamOptions): Promise<number> {
  const store = (await openedStateOf(o)).store;
  if (!store.claims) {
    if (o.json) await writeOut("[]\n");
    else
      await writeOut(
        `No claims: ${store.describe()} is a local state file, which sees no other stack. Cross-stack ` +
          `ownership is recorded on PostgreSQL (backend: {type: postgres}).\n`,
      );
    return EXIT.ok;
  }
  const all = await store.claims.all();
  if (o.json)
    return writeOut(
      jsonText(
        all.map((c) => ({
          stack: c.stack,
          workspace: c.workspace,
          address: c.address,
          ...redactClaim(c.claim),
          ...(c.pending ? { applying: true } : {}),
        })),
        2,
      ) + "\n",
    ).then(() => EXIT.ok);
  if (!all.length) return writeOut("No claims recorded: no stack has applied a state here yet.\n").then(() => EXIT.ok);
  // A grant an apply under way has reserved but not yet recorded is listed as such.
  const rows = [
    ["STACK", "WORKSPACE", "RESOURCE", "MANAGES"],
    ...all.map((c) => [
      c.stack,
      c.workspace,
      c.address,
      `${describeClaim(c.claim)}${c.pending ? "  (applying now)" : ""}`,
    ]),
  ];
  await writeOut(`${alignedColumns(rows.map((r) => r.map(terminalText))).join("\n")}\n`);
  return EXIT.ok;
}

/** Adds history, pull, push and claims to `converge state`; `common` adds the shared options. */
export function registerStateTeam(state: Command, common: (cmd: Command) => Command): void {
  common(
    state
      .command("history")
      .description(
        "List the versions of the state: serial, when, who, host, command, plan digest, access granted/revoked",
      ),
  ).action(action((o: TeamOptions) => history(o)));

  common(state.command("pull").description("Print the current state (or --serial N from the history) as JSON"))
    .option("--serial <n>", "a version from the history")
    .action(
      action(async (o: TeamOptions) => {
        const s = await stateAt(
          (await openedStateOf(o)).store,
          o.serial !== undefined ? serialOf(o.serial) : undefined,
        );
        await writeOut(serializeState(s));
        return EXIT.ok;
      }),
    );

  common(
    state
      .command("push")
      .argument("<file>", "a state file (e.g. from state pull)")
      .description("Replace the state with FILE (compare-and-swap on the current serial)"),
  )
    .option("--force", "replace a state of another lineage, or restore an older serial")
    .action(action((file: string, o: TeamOptions) => push(file, o)));

  common(
    state.command("claims").description("List what every stack's state manages (PostgreSQL: all stacks of the schema)"),
  ).action(action((o: TeamOptions) => claims(o)));
}
