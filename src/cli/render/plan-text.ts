// The human plan, Terraform's layout: symbols, per-attribute diffs, member lists diffed line by
// line, "# forces replacement", the drift section and the summary line. Pure: Plan → lines.
import { splitAddress } from "../../language/addresses.js";
import type { Plan, ResourceChange } from "../../generated/schemas.js";
import { displayAction, type ShownAction } from "../../contracts/actions.js";
import { type Line, type Style, seg } from "../../diagnostics/lines.js";
import { attributeLines, keyPad } from "./values.js";
import { accessSummaryLines, blockNoteLines, revocationLines, revocationsByAddress } from "./access-summary.js";
import type { AccessChange } from "../../generated/schemas.js";
import { pushAll } from "../../base/arrays.js";
import { ownershipNotes } from "./ownership-notes.js";
import { summaryText, targetLines } from "./plan-summary.js";
import { type AttrCtx, attribute, hasObjects, isObj, sameMember, sameValue } from "./attribute-diff.js";

export { summaryText };

const SYMBOL: Record<ShownAction, { sym: string; style: Style; verb: string }> = {
  create: { sym: "  +", style: "add", verb: "will be created" },
  update: { sym: "  ~", style: "change", verb: "will be updated in-place" },
  replace: { sym: "+/-", style: "replace", verb: "must be replaced" },
  delete: { sym: "  -", style: "remove", verb: "will be destroyed" },
  read: { sym: " <=", style: "read", verb: "will be read during apply" },
  import: { sym: "  =", style: "import", verb: "will be imported" },
  "import-update": { sym: "  ~", style: "change", verb: "will be imported and updated in-place" },
  "no-op": { sym: "   ", style: "dim", verb: "is unchanged" },
};

const REASON: Record<string, string> = {
  replace_because_cannot_update: "",
  replace_by_request: "(replacement requested with --replace)",
  delete_because_no_resource_config: "(because it is no longer in the stack)",
  read_because_dependency_pending: "(its arguments depend on values known only after apply)",
  create_because_gone: "(it was deleted outside of converge)",
};

/** What a resource block shows besides the change: drift (refresh's words, no notes), the access
 *  it revokes and its audit notes. */
interface BlockOptions {
  drift?: boolean;
  revokes?: readonly AccessChange[];
  audit?: readonly Line[];
}

function resourceBlock(c: ResourceChange, action: ShownAction, lines: Line[], opts: BlockOptions = {}): void {
  const drift = opts.drift === true;
  if (stateOnlyLines(c, action, lines, drift)) return;
  blockHeading(c, action, lines, drift);
  if (c.mode === "data" && c.change.after_unknown === true) {
    lines.push([seg("      # (all attributes known after apply)", "dim")]);
  } else {
    blockAttributes(c, action, lines, opts);
  }
  lines.push([seg("    }")]);
  lines.push([]);
}

/** A change to the state only (protect, moved): one line instead of a block; false for any other change. */
function stateOnlyLines(c: ResourceChange, action: ShownAction, lines: Line[], drift: boolean): boolean {
  if (action === "no-op" && c.state_only?.includes("protect") && !drift) {
    lines.push([
      seg(`  # ${c.address}`, "bold"),
      seg(` will be ${c.protect ? "protected" : "unprotected"} (state only: no cloud change)`),
    ]);
    lines.push([]);
    return true;
  }
  if (c.previous_address && !drift && action === "no-op") {
    lines.push([
      seg(`  # ${c.previous_address}`, "bold"),
      seg(" has moved to "),
      seg(c.address, "bold"),
      seg(" (state only: no cloud change)"),
    ]);
    lines.push([]);
    return true;
  }
  return false;
}

/** The block's "# address will be …" heading, its notes, and its opening `resource "type" "name" {` line. */
function blockHeading(c: ResourceChange, action: ShownAction, lines: Line[], drift: boolean): void {
  const s = SYMBOL[action];
  const verb = drift ? (c.change.action === "delete" ? "has been deleted" : "has changed") : s.verb;
  lines.push([seg(`  # ${c.address}`, "bold"), seg(` ${verb}`)]);
  const reason = c.action_reason && !drift ? REASON[c.action_reason] : "";
  if (reason) lines.push([seg(`  # ${reason}`, "dim")]);
  if (!drift) for (const note of ownershipNotes(c, action)) lines.push([seg(`  # ${note}`, "dim")]);
  if (c.previous_address && !drift) lines.push([seg(`  # (moved from ${c.previous_address})`, "dim")]);
  if (c.change.importing && !drift) lines.push([seg(`  # (import ID "${c.change.importing.id}")`, "dim")]);
  const sym = drift ? (c.change.action === "delete" ? SYMBOL.delete : SYMBOL.update) : s;
  const kw = c.mode === "data" ? "data" : "resource";
  // The block names the resource, the heading above its instance (Terraform's `"viewers"` under
  // `# viewers["sre"]`): an instance address in quotes would read as two strings.
  lines.push([seg(sym.sym, sym.style), seg(` ${kw} "${c.type}" "${splitAddress(c.address).name}" {`)]);
}

/** The block's attributes (unchanged ones counted, not shown), its revocations and audit notes. */
function blockAttributes(c: ResourceChange, action: ShownAction, lines: Line[], opts: BlockOptions): void {
  const before = isObj(c.change.before) ? c.change.before : {};
  const after = isObj(c.change.after) ? c.change.after : {};
  const unknown = isObj(c.change.after_unknown) ? c.change.after_unknown : {};
  const ctx: AttrCtx = {
    indent: "      ",
    replacePaths: (c.change.replace_paths ?? []).map((p) => String(p[0])),
    lines,
    sameElement: sameMember,
  };
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const pad = keyPad(keys);
  const mode = action === "create" ? "create" : action === "delete" && !opts.drift ? "delete" : "diff";
  let hidden = 0;
  for (const k of keys) {
    if (action === "import") {
      // Lists of objects (a policy's bindings) over several lines; the rest inline.
      if (hasObjects(after[k]) || isObj(after[k])) pushAll(lines, attributeLines(k, pad, after[k], "        "));
      else lines.push([seg(`        ${k.padEnd(pad)} = ${JSON.stringify(after[k])}`)]);
      continue;
    }
    const old = mode === "create" ? undefined : before[k];
    if (!attribute(ctx, k, pad, old, mode === "delete" ? undefined : after[k], unknown[k], mode)) hidden++;
  }
  if (!opts.drift) {
    pushAll(lines, revocationLines(c, opts.revokes));
    pushAll(lines, opts.audit ?? []);
  }
  if (hidden) lines.push([seg(`        # (${hidden} unchanged attribute${hidden === 1 ? "" : "s"} hidden)`, "dim")]);
}

export interface PlanTextOptions {
  /** Show unchanged resources too. */
  details?: boolean;
  /** Lint warnings found for this plan, counted in the access summary. */
  lintWarnings?: number;
  /** Start with the plan's target (default); false when the caller showed it first. */
  target?: boolean;
}

/** `converge refresh`: the drift it records in the state, in refresh's words (it plans nothing). */
export function refreshLines(plan: Plan): Line[] {
  if (!plan.resource_drift.length) return [[seg("No changes outside of converge.")]];
  const lines: Line[] = [
    [seg("Objects have changed outside of converge", "heading")],
    [],
    [seg("converge read the live policies and records these changes, made outside of converge, in the state:")],
    [],
  ];
  for (const c of plan.resource_drift)
    resourceBlock(c, c.change.action === "delete" ? "delete" : "update", lines, { drift: true });
  return lines;
}

export function planLines(plan: Plan, opts: PlanTextOptions = {}): Line[] {
  return [...planLineStream(plan, opts)];
}

/** planLines(plan, opts) line by line, as they are made (printLines takes it as it is). */
export function* planLineStream(plan: Plan, opts: PlanTextOptions = {}): Generator<Line, void, undefined> {
  for (const group of planLineGroups(plan, opts)) yield* group;
}

/** A plan of 100,000 creates is 1.3 million lines: held all at once until printed, they were
 *  most of rendering's garbage collection. planLineGroups hands them out a few thousand at a time. */
const GROUP_LINES = 4096;

/** planLines(plan, opts), in groups of lines (their concatenation is planLines' result). */
function* planLineGroups(plan: Plan, opts: PlanTextOptions = {}): Generator<Line[], void, undefined> {
  let lines: Line[] = opts.target === false ? [] : targetLines(plan);
  if (plan.resource_drift.length) lines = yield* driftSection(plan, lines);
  const visible = plan.resource_changes.filter(
    (c) => opts.details || displayAction(c) !== "no-op" || c.state_only?.length || c.previous_address,
  );
  // By name, as apply's "Outputs:" and `converge output` list them.
  const outputChanges = Object.entries(plan.output_changes)
    .filter(([, c]) => c.action !== "no-op")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!visible.length && !outputChanges.length) {
    lines.push([seg("No changes.", "heading"), seg(" Your access policies match the stack.")]);
    lines.push([]);
    lines.push([
      seg(
        "converge compared the stack with its state and the live policies and " +
          "found no differences, so no changes are needed.",
      ),
    ]);
    yield lines;
    return;
  }
  if (visible.length) lines = yield* resourceSection(plan, visible, lines);
  lines.push([seg("Plan: ", "bold"), seg(summaryText(plan).slice("Plan: ".length), "bold")]);
  if (outputChanges.length) outputChangeLines(outputChanges, lines);
  lines.push([]);
  pushAll(lines, accessSummaryLines(plan, opts.lintWarnings));
  yield lines;
}

/** The drift section, appended to `lines`: full groups are yielded, the unfinished one returned. */
function* driftSection(plan: Plan, lines: Line[]): Generator<Line[], Line[], undefined> {
  lines.push([seg("Objects have changed outside of converge", "heading")]);
  lines.push([]);
  lines.push([
    seg('converge detected the following changes made outside of converge since the last "converge apply":'),
  ]);
  lines.push([]);
  for (const c of plan.resource_drift) {
    resourceBlock(c, c.change.action === "delete" ? "delete" : "update", lines, { drift: true });
    if (lines.length < GROUP_LINES) continue;
    yield lines;
    lines = [];
  }
  lines.push([
    seg(
      "Unless you have made equivalent changes to your stack, the actions " +
        "below will undo or respond to these changes.",
      "dim",
    ),
  ]);
  lines.push([]);
  return lines;
}

/** The legend of the symbols used and a block per visible resource, appended to `lines`: full groups
 *  are yielded, the unfinished one returned. */
function* resourceSection(
  plan: Plan,
  visible: readonly ResourceChange[],
  lines: Line[],
): Generator<Line[], Line[], undefined> {
  legendLines(visible, lines);
  const revokes = revocationsByAddress(plan);
  for (const c of visible) {
    resourceBlock(c, displayAction(c), lines, { revokes: revokes.get(c.address), audit: blockNoteLines(c, plan) });
    if (lines.length < GROUP_LINES) continue;
    yield lines;
    lines = [];
  }
  return lines;
}

const LEGEND = {
  create: "create",
  update: "update in-place",
  replace: "create replacement and then destroy",
  delete: "destroy",
  read: "read (data resources)",
  import: "import",
} as const;

/** What the symbols of the visible resources mean; nothing for a plan that only moves resources in the
 *  state (it has no symbol to explain). */
function legendLines(visible: readonly ResourceChange[], lines: Line[]): void {
  const used = new Set(visible.map(displayAction));
  const symbols = (["create", "update", "replace", "delete", "read", "import"] as const).filter(
    (a) => used.has(a) || (a === "update" && used.has("import-update")),
  );
  if (!symbols.length) return;
  lines.push([
    seg("converge will perform the following actions. Resource actions are indicated with the following symbols:"),
  ]);
  for (const a of symbols) lines.push([seg(SYMBOL[a].sym.padStart(4), SYMBOL[a].style), seg(` ${LEGEND[a]}`)]);
  lines.push([]);
}

/** "Changes to Outputs:", one attribute per changed output. */
function outputChangeLines(outputChanges: readonly [string, Plan["output_changes"][string]][], lines: Line[]): void {
  lines.push([]);
  lines.push([seg("Changes to Outputs:")]);
  const pad = keyPad(outputChanges.map(([k]) => k));
  const ctx: AttrCtx = { indent: "  ", replacePaths: [], lines, sameElement: sameValue };
  for (const [name, c] of outputChanges) {
    const mode = c.action === "create" ? "create" : c.action === "delete" ? "delete" : "diff";
    const before = mode === "create" ? undefined : c.before;
    attribute(ctx, name, pad, before, mode === "delete" ? undefined : c.after, c.after_unknown, mode);
  }
}
