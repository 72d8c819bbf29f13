// The human plan, Terraform's layout: symbols, per-attribute diffs, member lists diffed line by
// line, "# forces replacement", the drift section and the summary line. Pure: Plan → lines.
import { splitAddress } from "../../language/addresses.js";
import { diffArrays } from "diff";
import type { Condition, Plan, ResourceChange } from "../../generated/schemas.js";
import { memberKey } from "../../iam/members.js";
import { conditionKey } from "../../iam/conditions.js";
import { displayAction, type ShownAction } from "../../contracts/actions.js";
import { jsonEqual } from "../../plan/compare.js";
import { type Line, type Style, seg } from "../../diagnostics/lines.js";
import { attributeLines, keyPad, keyText } from "./values.js";
import { accessSummaryLines, blockNoteLines, revocationLines, revocationsByAddress } from "./access-summary.js";
import type { AccessChange } from "../../generated/schemas.js";
import { pushAll } from "../../base/arrays.js";
import { ownershipNotes } from "./ownership-notes.js";
import { summaryText, targetLines } from "./plan-summary.js";

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

function fmtScalar(v: unknown, unknown: boolean): string {
  if (unknown) return "(known after apply)";
  if (v === null || v === undefined) return "null";
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

interface AttrCtx {
  indent: string;
  replacePaths: string[];
  lines: Line[];
  /** Whether two elements of a list are the same element: a resource's members compare by
   *  memberKey (Google stores emails lower-cased), an output's values exactly. */
  sameElement: (a: unknown, b: unknown) => boolean;
}

/** A resource's list elements: members by memberKey, anything else by its JSON. */
const sameMember = (a: unknown, b: unknown): boolean =>
  typeof a === "string" && typeof b === "string" ? memberKey(a) === memberKey(b) : jsonEqual(a, b);
/** An output's list elements: by their JSON. */
const sameValue = (a: unknown, b: unknown): boolean => jsonEqual(a, b);

const MARKS: Record<"add" | "remove" | "change" | "same", readonly [string, Style | undefined]> = {
  add: ["+", "add"],
  remove: ["-", "remove"],
  change: ["~", "change"],
  same: [" ", undefined],
};
const mark = (kind: "add" | "remove" | "change" | "same"): readonly [string, Style | undefined] => MARKS[kind];
/** No "# forces replacement" note (one array for every attribute without it). */
const NO_FORCES: Line = Object.freeze([]) as unknown as Line;
/** A line and its "# forces replacement" note, if any. */
const withForces = (line: Line, forces: Line): Line => (forces.length ? line.concat(forces) : line);

/** What a value is, for a change: a list, a map, or a scalar (null included). */
const shapeOf = (v: unknown): "list" | "map" | "scalar" => (Array.isArray(v) ? "list" : isObj(v) ? "map" : "scalar");

/** Renders one attribute; returns false when it is unchanged (and was hidden). */
function attribute(
  ctx: AttrCtx,
  key: string,
  pad: number,
  before: unknown,
  after: unknown,
  afterUnknown: unknown,
  mode: "create" | "delete" | "diff",
): boolean {
  const unknown = afterUnknown === true;
  const forces =
    ctx.replacePaths.length && ctx.replacePaths.includes(key) ? [seg(" # forces replacement", "replace")] : NO_FORCES;
  const name = keyText(key).padEnd(pad);
  const { indent, lines } = ctx;
  if (mode === "diff" && !unknown && jsonEqual(before ?? null, after ?? null)) return false;
  const kind =
    mode === "create" || before === undefined || before === null
      ? "add"
      : mode === "delete" || ((after === undefined || after === null) && !unknown)
        ? "remove"
        : "change";
  const [m, style] = mark(kind);
  const value = kind === "remove" ? before : after;

  // A list or map that becomes something else (or a value not known yet): the old value as
  // removed, then the new one as added.
  if (kind === "change" && (unknown ? shapeOf(before) !== "scalar" : shapeOf(before) !== shapeOf(after))) {
    valueLines(ctx, `${name} = `, before, "remove", "", NO_FORCES, undefined, false);
    valueLines(ctx, `${name} = `, after, "add", "", forces, afterUnknown);
    return true;
  }
  if (!unknown && (Array.isArray(before) || Array.isArray(after))) {
    listAttribute(
      ctx,
      `${name} = `,
      forces,
      kind,
      Array.isArray(before) ? before : [],
      Array.isArray(after) ? after : [],
      afterUnknown,
    );
    return true;
  }
  if (kind !== "change" && shapeOf(value) !== "scalar") {
    valueLines(ctx, `${name} = `, value, kind, "", forces, kind === "add" ? afterUnknown : undefined);
    return true;
  }
  if (isObj(value) || (kind === "change" && (isObj(before) || isObj(after)))) {
    lines.push(withForces([seg(`${indent}${m} `, style), seg(`${name} = {`)], forces));
    const bo = isObj(before) ? before : {};
    const ao = isObj(after) ? after : {};
    const keys = [...new Set([...Object.keys(bo), ...Object.keys(ao)])].sort();
    const inner = keyPad(keys);
    const sub: AttrCtx = { ...ctx, indent: indent + "    ", replacePaths: [] };
    const um = isObj(afterUnknown) ? afterUnknown : {};
    for (const k of keys) attribute(sub, k, inner, bo[k], ao[k], um[k], "diff");
    lines.push([seg(`${indent}  }`)]);
    return true;
  }
  if (kind === "change") {
    lines.push(
      withForces(
        [seg(`${indent}${m} `, style), seg(`${name} = ${fmtScalar(before, false)} -> ${fmtScalar(after, unknown)}`)],
        forces,
      ),
    );
  } else if (kind === "remove") {
    lines.push(
      withForces([seg(`${indent}${m} `, style), seg(`${name} = ${fmtScalar(before, false)} -> null`)], forces),
    );
  } else {
    lines.push(withForces([seg(`${indent}${m} `, style), seg(`${name} = ${fmtScalar(after, unknown)}`)], forces));
  }
  return true;
}

/**
 * A whole value added, removed or kept, every line marked so, Terraform's way: a scalar (or an
 * empty list or map) after `head` on one line, otherwise each element of a list and each entry of
 * a map on lines of their own, however deeply nested, then the closing bracket and `tail`. A
 * removed map entry reads `key = value -> null` (unless `toNull` is false: it becomes another value).
 * `unknownMask` marks what is known only after apply.
 */
function valueLines(
  ctx: AttrCtx,
  head: string,
  value: unknown,
  kind: "add" | "remove" | "same",
  tail: string,
  forces: Line,
  unknownMask?: unknown,
  toNull = true,
): void {
  const [m, style] = mark(kind);
  const { indent, lines } = ctx;
  const lead = seg(`${indent}${m} `, style);
  const sub: AttrCtx = { ...ctx, indent: indent + "    " };
  if (unknownMask !== true && Array.isArray(value) && value.length) {
    lines.push(withForces([lead, seg(`${head}[`)], forces));
    const masks = Array.isArray(unknownMask) ? unknownMask : [];
    value.forEach((v, i) => valueLines(sub, "", v, kind, ",", NO_FORCES, masks[i]));
    lines.push([seg(`${indent}  ]${tail}`)]);
  } else if (unknownMask !== true && isObj(value) && Object.keys(value).length) {
    lines.push(withForces([lead, seg(`${head}{`)], forces));
    const keys = Object.keys(value).sort();
    const pad = keyPad(keys);
    const masks = isObj(unknownMask) ? unknownMask : {};
    for (const k of keys) valueLines(sub, `${keyText(k).padEnd(pad)} = `, value[k], kind, "", NO_FORCES, masks[k]);
    lines.push([seg(`${indent}  }${tail}`)]);
  } else {
    const text =
      unknownMask === true
        ? "(known after apply)"
        : Array.isArray(value)
          ? "[]"
          : isObj(value)
            ? "{}"
            : fmtScalar(value, false);
    const gone = kind === "remove" && toNull && head && !Array.isArray(value) && !isObj(value) ? " -> null" : "";
    lines.push(withForces([lead, seg(`${head}${text}${gone}${tail}`)], forces));
  }
}

/**
 * A list attribute. Created or destroyed: every element as it is. Changed: a list of maps with
 * an identity each (a policy's bindings, its audit configs) element by element (see
 * objectListAttribute); any other list diffed element by element, each element shown whole as
 * removed (-), added (+) or kept.
 */
function listAttribute(
  ctx: AttrCtx,
  head: string,
  forces: Line,
  kind: "add" | "remove" | "change",
  before: unknown[],
  after: unknown[],
  afterUnknown: unknown,
): void {
  if (kind !== "change") {
    valueLines(ctx, head, kind === "add" ? after : before, kind, "", forces, kind === "add" ? afterUnknown : undefined);
    return;
  }
  if (identifiedMaps(before) && identifiedMaps(after)) {
    objectListAttribute(ctx, `${head}[`, forces, before, after);
    return;
  }
  const { indent, lines } = ctx;
  const [m, style] = mark("change");
  lines.push(withForces([seg(`${indent}${m} `, style), seg(`${head}[`)], forces));
  const sub: AttrCtx = { ...ctx, indent: indent + "    " };
  const masks = Array.isArray(afterUnknown) ? afterUnknown : [];
  let at = 0; // the index in `after` of the next added or kept element
  for (const part of diffArrays(before, after, { comparator: ctx.sameElement })) {
    const kind = part.added ? "add" : part.removed ? "remove" : "same";
    for (const v of part.value)
      valueLines(sub, "", v, kind, ",", NO_FORCES, kind === "remove" ? undefined : masks[at++]);
  }
  lines.push([seg(`${indent}  ]`)]);
}

const hasObjects = (v: unknown) => Array.isArray(v) && v.some(isObj);

/** What identifies an element of a list of objects across the change: a binding by its role and
 *  condition, an audit config by its service, a log config by its type; nothing otherwise. */
function elementKey(v: unknown): string | undefined {
  if (isObj(v) && typeof v.role === "string")
    return `role\u0000${v.role}\u0000${conditionKey(v.condition as Condition | undefined)}`;
  if (isObj(v) && typeof v.service === "string") return `service\u0000${v.service}`;
  if (isObj(v) && typeof v.logType === "string") return `log\u0000${v.logType}`;
  return undefined;
}

/** Whether every element has an identity (elementKey) and no two the same: a set of bindings,
 *  audit configs or log configs, whose order does not matter. */
function identifiedMaps(list: readonly unknown[]): boolean {
  const keys = new Set<string>();
  for (const v of list) {
    const k = elementKey(v);
    if (k === undefined || keys.has(k)) return false;
    keys.add(k);
  }
  return true;
}

/** The identifying attributes, shown unchanged inside a changed element for context. */
const IDENTITY = ["role", "condition", "service", "logType"];

/**
 * A changed list of identified objects (a policy's bindings, its audit configs): each element
 * added (+), removed (-) or changed (~, its attributes diffed inside, its identity shown);
 * unchanged ones hidden and counted.
 */
function objectListAttribute(ctx: AttrCtx, head: string, forces: Line, before: unknown[], after: unknown[]): void {
  const { indent, lines } = ctx;
  const [m, style] = mark("change");
  lines.push(withForces([seg(`${indent}${m} `, style), seg(head)], forces));
  const was = new Map(before.map((v) => [elementKey(v)!, v]));
  const now = new Map(after.map((v) => [elementKey(v)!, v]));
  const keys = [...new Set([...was.keys(), ...now.keys()])];
  const sub: AttrCtx = { ...ctx, indent: indent + "    ", replacePaths: [] };
  let hidden = 0;
  for (const k of keys) {
    const [b, a] = [was.get(k), now.get(k)];
    if (b !== undefined && a !== undefined && jsonEqual(b, a)) {
      hidden++;
      continue;
    }
    elementBlock(sub, b, a);
  }
  if (hidden)
    lines.push([seg(`${indent}      # (${hidden} unchanged ${hidden === 1 ? "element" : "elements"} hidden)`, "dim")]);
  lines.push([seg(`${indent}  ]`)]);
}

/** One element of a list of objects, as a block of its attributes. */
function elementBlock(ctx: AttrCtx, before: unknown, after: unknown): void {
  const kind = before === undefined ? "add" : after === undefined ? "remove" : "change";
  const [m, style] = mark(kind);
  ctx.lines.push([seg(`${ctx.indent}${m} `, style), seg("{")]);
  const bo = isObj(before) ? before : {};
  const ao = isObj(after) ? after : {};
  const keys = [...new Set([...Object.keys(bo), ...Object.keys(ao)])].sort();
  const pad = keyPad(keys);
  const inner: AttrCtx = { ...ctx, indent: ctx.indent + "    " };
  for (const k of keys) {
    const shown = attribute(
      inner,
      k,
      pad,
      kind === "add" ? undefined : bo[k],
      kind === "remove" ? undefined : ao[k],
      undefined,
      kind === "add" ? "create" : kind === "remove" ? "delete" : "diff",
    );
    if (!shown && IDENTITY.includes(k))
      ctx.lines.push([seg(`${inner.indent}  ${keyText(k).padEnd(pad)} = ${JSON.stringify(ao[k])}`)]);
  }
  ctx.lines.push([seg(`${ctx.indent}  },`)]);
}

function resourceBlock(
  c: ResourceChange,
  action: ShownAction,
  lines: Line[],
  opts: { drift?: boolean; revokes?: readonly AccessChange[]; audit?: readonly Line[] } = {},
): void {
  const s = SYMBOL[action];
  if (action === "no-op" && c.state_only?.includes("protect") && !opts.drift) {
    lines.push([
      seg(`  # ${c.address}`, "bold"),
      seg(` will be ${c.protect ? "protected" : "unprotected"} (state only: no cloud change)`),
    ]);
    lines.push([]);
    return;
  }
  if (c.previous_address && !opts.drift && action === "no-op") {
    lines.push([
      seg(`  # ${c.previous_address}`, "bold"),
      seg(" has moved to "),
      seg(c.address, "bold"),
      seg(" (state only: no cloud change)"),
    ]);
    lines.push([]);
    return;
  }
  const verb = opts.drift ? (c.change.action === "delete" ? "has been deleted" : "has changed") : s.verb;
  lines.push([seg(`  # ${c.address}`, "bold"), seg(` ${verb}`)]);
  const reason = c.action_reason && !opts.drift ? REASON[c.action_reason] : "";
  if (reason) lines.push([seg(`  # ${reason}`, "dim")]);
  if (!opts.drift) for (const note of ownershipNotes(c, action)) lines.push([seg(`  # ${note}`, "dim")]);
  if (c.previous_address && !opts.drift) lines.push([seg(`  # (moved from ${c.previous_address})`, "dim")]);
  if (c.change.importing && !opts.drift) lines.push([seg(`  # (import ID "${c.change.importing.id}")`, "dim")]);
  const sym = opts.drift ? (c.change.action === "delete" ? SYMBOL.delete : SYMBOL.update) : s;
  const kw = c.mode === "data" ? "data" : "resource";
  // The block names the resource, the heading above its instance (Terraform's `"viewers"` under
  // `# viewers["sre"]`): an instance address in quotes would read as two strings.
  lines.push([seg(sym.sym, sym.style), seg(` ${kw} "${c.type}" "${splitAddress(c.address).name}" {`)]);
  const before = isObj(c.change.before) ? c.change.before : {};
  const after = isObj(c.change.after) ? c.change.after : {};
  const unknown = isObj(c.change.after_unknown) ? c.change.after_unknown : {};
  const ctx: AttrCtx = {
    indent: "      ",
    replacePaths: (c.change.replace_paths ?? []).map((p) => String(p[0])),
    lines,
    sameElement: sameMember,
  };
  if (c.mode === "data" && c.change.after_unknown === true) {
    lines.push([seg("      # (all attributes known after apply)", "dim")]);
  } else {
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
      if (
        !attribute(
          ctx,
          k,
          pad,
          mode === "create" ? undefined : before[k],
          mode === "delete" ? undefined : after[k],
          unknown[k],
          mode,
        )
      )
        hidden++;
    }
    if (!opts.drift) {
      pushAll(lines, revocationLines(c, opts.revokes));
      pushAll(lines, opts.audit ?? []);
    }
    if (hidden) lines.push([seg(`        # (${hidden} unchanged attribute${hidden === 1 ? "" : "s"} hidden)`, "dim")]);
  }
  lines.push([seg("    }")]);
  lines.push([]);
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
  if (plan.resource_drift.length) {
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
  }
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
  if (visible.length) {
    const used = new Set(visible.map(displayAction));
    const symbols = (["create", "update", "replace", "delete", "read", "import"] as const).filter(
      (a) => used.has(a) || (a === "update" && used.has("import-update")),
    );
    // A plan that only moves resources in the state has no symbol to explain: no legend.
    if (symbols.length) {
      lines.push([
        seg("converge will perform the following actions. Resource actions are indicated with the following symbols:"),
      ]);
      for (const a of symbols) {
        const legend = {
          create: "create",
          update: "update in-place",
          replace: "create replacement and then destroy",
          delete: "destroy",
          read: "read (data resources)",
          import: "import",
        }[a];
        lines.push([seg(SYMBOL[a].sym.padStart(4), SYMBOL[a].style), seg(` ${legend}`)]);
      }
      lines.push([]);
    }
    const revokes = revocationsByAddress(plan);
    for (const c of visible) {
      resourceBlock(c, displayAction(c), lines, { revokes: revokes.get(c.address), audit: blockNoteLines(c, plan) });
      if (lines.length < GROUP_LINES) continue;
      yield lines;
      lines = [];
    }
  }
  lines.push([seg("Plan: ", "bold"), seg(summaryText(plan).slice("Plan: ".length), "bold")]);
  if (outputChanges.length) {
    lines.push([]);
    lines.push([seg("Changes to Outputs:")]);
    const pad = keyPad(outputChanges.map(([k]) => k));
    const ctx: AttrCtx = { indent: "  ", replacePaths: [], lines, sameElement: sameValue };
    for (const [name, c] of outputChanges) {
      const mode = c.action === "create" ? "create" : c.action === "delete" ? "delete" : "diff";
      attribute(
        ctx,
        name,
        pad,
        mode === "create" ? undefined : c.before,
        mode === "delete" ? undefined : c.after,
        c.after_unknown,
        mode,
      );
    }
  }
  lines.push([]);
  pushAll(lines, accessSummaryLines(plan, opts.lintWarnings));
  yield lines;
}
