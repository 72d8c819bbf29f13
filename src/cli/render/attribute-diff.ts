// One attribute of a plan's resource block or output change, Terraform's way: scalars as
// `old -> new`, maps key by key, lists of members diffed line by line, lists of bindings element by
// element (matched by role and condition), and the "# forces replacement" note. Pure: values → lines.
import { diffArrays } from "diff";
import type { Condition } from "../../generated/schemas.js";
import { memberKey } from "../../iam/members.js";
import { conditionKey } from "../../iam/conditions.js";
import { jsonEqual } from "../../plan/compare.js";
import { type Line, type Style, seg } from "../../diagnostics/lines.js";
import { keyPad, keyText } from "./values.js";

function fmtScalar(v: unknown, unknown: boolean): string {
  if (unknown) return "(known after apply)";
  if (v === null || v === undefined) return "null";
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export interface AttrCtx {
  indent: string;
  replacePaths: string[];
  lines: Line[];
  /** Whether two elements of a list are the same element: a resource's members compare by
   *  memberKey (Google stores emails lower-cased), an output's values exactly. */
  sameElement: (a: unknown, b: unknown) => boolean;
}

/** A resource's list elements: members by memberKey, anything else by its JSON. */
export const sameMember = (a: unknown, b: unknown): boolean =>
  typeof a === "string" && typeof b === "string" ? memberKey(a) === memberKey(b) : jsonEqual(a, b);
/** An output's list elements: by their JSON. */
export const sameValue = (a: unknown, b: unknown): boolean => jsonEqual(a, b);

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
export function attribute(
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

export const hasObjects = (v: unknown) => Array.isArray(v) && v.some(isObj);

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
