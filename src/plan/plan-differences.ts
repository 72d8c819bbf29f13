// What was reviewed is what is applied: the differences, in the grants they make, between a saved
// plan and a fresh plan of the same stack, state and options against the live cloud. Compared:
// every resource change (by mode, address and type: its actions, the import ID, the configuration
// of values known only during apply, the fields that make a grant — name, role, condition,
// members or member — before and after the change, and whether those grants were made outside
// converge, which decides whether a delete revokes) and the access changes. Timestamps, etags,
// ids, positions and the order of lists are not compared. Each difference is one readable line.
import type {
  AccessChange,
  AccessDelta,
  AuditConfig,
  Binding,
  Condition,
  Plan,
  ResourceChange,
} from "../generated/schemas.js";
import { resourceDriver } from "../drivers/registry.js";
import type { InputField } from "../drivers/types.js";
import { canonicalAuditConfigs, canonicalBindings } from "../iam/policy.js";
import { conditionKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";
import { jsonEqual } from "./compare.js";
import { displayAction, type ShownAction } from "../contracts/actions.js";
import { pushAll } from "../base/arrays.js";

const VERB: Record<ShownAction, [does: string, would: string]> = {
  create: ["creates", "create"],
  update: ["updates", "update"],
  replace: ["replaces", "replace"],
  delete: ["deletes", "delete"],
  read: ["reads", "read"],
  import: ["imports", "import"],
  "import-update": ["imports and updates", "import and update"],
  "no-op": ["leaves unchanged", "leave unchanged"],
};

type Field = InputField;
/** The fields compared for a type no driver knows (a hand-made plan): every input field. */
const ALL_FIELDS: readonly Field[] = ["name", "role", "condition", "members", "member", "bindings", "auditConfigs"];

/**
 * Whether a grant was made outside converge: a delete leaves such a grant in place, a create adopts it (a later destroy
 * leaves it).
 */
const ADOPTION: [flag: "before_adopted" | "after_adopted", does: string, doesNot: string][] = [
  [
    "before_adopted",
    "leaves the grant before the change in place (granted outside converge before it was adopted)",
    "does not leave the grant before the change in place",
  ],
  [
    "after_adopted",
    "adopts the grant after the change (already granted outside converge)",
    "does not adopt the grant after the change",
  ],
];

const changeKey = (c: ResourceChange) => `${c.mode}\u0000${c.address}\u0000${c.type}`;

/** Every difference, saved plan first; [] when the fresh plan makes the reviewed changes. */
export function planDifferences(saved: Plan, fresh: Plan): string[] {
  return [
    ...resourceDifferences(saved.resource_changes, fresh.resource_changes),
    ...accessDifferences(saved.access_changes, fresh.access_changes),
  ];
}

function resourceDifferences(saved: readonly ResourceChange[], fresh: readonly ResourceChange[]): string[] {
  const out: string[] = [];
  const freshByKey = new Map(fresh.map((c) => [changeKey(c), c]));
  const seen = new Set<string>();
  for (const s of saved) {
    const key = changeKey(s);
    if (seen.has(key)) {
      out.push(`${s.address}: the saved plan lists it more than once`);
      continue;
    }
    seen.add(key);
    const f = freshByKey.get(key);
    if (f) pushAll(out, changeDifferences(s, f));
    else out.push(`${s.address}: the saved plan ${VERB[displayAction(s)][0]} it; a fresh plan has no change for it`);
  }
  for (const f of fresh)
    if (!seen.has(changeKey(f)))
      out.push(`${f.address}: a fresh plan would ${VERB[displayAction(f)][1]} it; the saved plan has no change for it`);
  return out;
}

function changeDifferences(s: ResourceChange, f: ResourceChange): string[] {
  const a = s.address;
  const out: string[] = [];
  const [sa, fa] = [displayAction(s), displayAction(f)];
  if (sa !== fa || s.change.action !== f.change.action) {
    out.push(
      `${a}: the saved plan ${VERB[sa][0]} it (${s.change.action}), a fresh ` +
        `plan would ${VERB[fa][1]} it (${f.change.action})`,
    );
  }
  if ((s.change.importing?.id ?? null) !== (f.change.importing?.id ?? null))
    out.push(
      `${a}: import ID: the saved plan has ${show(s.change.importing?.id)}, a ` +
        `fresh plan has ${show(f.change.importing?.id)}`,
    );
  if (!jsonEqual(s.config ?? null, f.config ?? null))
    out.push(`${a}: the configuration of values known only during apply differs`);
  if (s.mode !== "managed") return out;
  for (const [flag, does, doesNot] of ADOPTION) {
    if ((s[flag] === true) !== (f[flag] === true))
      out.push(
        `${a}: the saved plan ${s[flag] === true ? does : doesNot}, a fresh ` +
          `plan ${f[flag] === true ? "does" : "does not"}`,
      );
  }
  const fields = resourceDriver(s.type)?.inputFields ?? ALL_FIELDS;
  for (const [when, sv, fv] of [
    ["before", s.change.before, f.change.before],
    ["after", s.change.after, f.change.after],
  ] as const) {
    if ((sv === null) !== (fv === null)) {
      out.push(
        `${a}: ${when} the change: the saved plan has ${sv === null ? "nothing" : "a grant"}, ` +
          `a fresh plan has ${fv === null ? "nothing" : "a grant"}`,
      );
      continue;
    }
    if (sv === null) continue;
    for (const field of fields) {
      const [x, y] = [fieldOf(sv, field), fieldOf(fv, field)];
      if (x.key !== y.key)
        out.push(`${a}: ${field} ${when} the change: the saved plan has ${x.text}, a fresh plan has ${y.text}`);
    }
  }
  return out;
}

/** A grant field as a comparison key (IAM semantics: member case, member order) and as text. */
function fieldOf(value: unknown, field: Field): { key: string; text: string } {
  const v = (
    value !== null && typeof value === "object" ? (value as Record<string, unknown>)[field] : undefined
  ) as unknown;
  if (field === "condition")
    return { key: conditionKey(v as Condition | undefined), text: conditionText(v as Condition | undefined) };
  if (v === undefined) return { key: "\u0000unknown", text: "a value known only during apply" };
  switch (field) {
    case "members": {
      if (!Array.isArray(v) || !v.every((m) => typeof m === "string"))
        return { key: JSON.stringify(v), text: JSON.stringify(v) };
      const sorted = [...(v as string[])].sort((p, q) =>
        memberKey(p) < memberKey(q) ? -1 : memberKey(p) > memberKey(q) ? 1 : 0,
      );
      return { key: JSON.stringify([...new Set(sorted.map(memberKey))]), text: `[${sorted.join(", ")}]` };
    }
    case "member":
      return typeof v === "string"
        ? { key: memberKey(v), text: v }
        : { key: JSON.stringify(v), text: JSON.stringify(v) };
    case "bindings":
      return Array.isArray(v)
        ? {
            key: JSON.stringify(
              canonicalBindings(v as Binding[]).map((b) => [
                b.role,
                conditionKey(b.condition),
                b.members.map(memberKey),
              ]),
            ),
            text: JSON.stringify(v),
          }
        : { key: JSON.stringify(v), text: JSON.stringify(v) };
    case "auditConfigs":
      return Array.isArray(v)
        ? { key: JSON.stringify(canonicalAuditConfigs(v as AuditConfig[])), text: JSON.stringify(v) }
        : { key: JSON.stringify(v), text: JSON.stringify(v) };
    default:
      return { key: JSON.stringify(v), text: typeof v === "string" ? v : JSON.stringify(v) };
  }
}

function conditionText(c: Condition | undefined): string {
  return c ? `condition "${c.title}" (${c.expression})` : "no condition";
}

function show(v: string | undefined): string {
  return v === undefined ? "none" : `"${v}"`;
}

const accessKey = (c: AccessChange) =>
  [c.object, c.kind, memberKey(c.principal), c.role, conditionKey(c.condition), c.action].join("\u0000");

function accessText(c: AccessChange): string {
  return `${c.principal} ${c.role}${c.condition ? ` (condition "${c.condition.title}")` : ""} on ${c.object}`;
}

function accessDifferences(saved: AccessDelta | undefined, fresh: AccessDelta | undefined): string[] {
  const out: string[] = [];
  const s = new Map((saved?.changes ?? []).map((c) => [accessKey(c), c]));
  const f = new Map((fresh?.changes ?? []).map((c) => [accessKey(c), c]));
  const who = (c: AccessChange) => (c.addresses.length ? c.addresses.join(", ") : c.object);
  for (const [k, c] of s)
    if (!f.has(k)) out.push(`${who(c)}: the saved plan ${c.action}s ${accessText(c)}; a fresh plan would not`);
  for (const [k, c] of f)
    if (!s.has(k)) out.push(`${who(c)}: a fresh plan would ${c.action} ${accessText(c)}; the saved plan does not`);
  pushAll(out, rewordingDifferences(saved, fresh));
  const si = new Set(saved?.incomplete ?? []);
  const fi = new Set(fresh?.incomplete ?? []);
  for (const o of si)
    if (!fi.has(o)) out.push(`${o}: the saved plan could not tell who gains or loses access on it, a fresh plan can`);
  for (const o of fi)
    if (!si.has(o)) out.push(`${o}: a fresh plan cannot tell who gains or loses access on it, the saved plan could`);
  return out;
}

/**
 * Each member a condition change moves (access_changes.condition_changes), by object, role, member and the two
 * conditions.
 */
function moves(d: AccessDelta | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of d?.condition_changes ?? []) {
    for (const p of c.principals)
      out.set(
        [c.object, c.role, memberKey(p), conditionKey(c.before), conditionKey(c.after)].join("\u0000"),
        `${p} from ${conditionText(c.before)} to ${conditionText(c.after)} of ${c.role} on ${c.object}`,
      );
  }
  return out;
}

function rewordingDifferences(saved: AccessDelta | undefined, fresh: AccessDelta | undefined): string[] {
  const [s, f] = [moves(saved), moves(fresh)];
  return [
    ...[...s].filter(([k]) => !f.has(k)).map(([, t]) => `the saved plan moves ${t}; a fresh plan would not`),
    ...[...f].filter(([k]) => !s.has(k)).map(([, t]) => `a fresh plan would move ${t}; the saved plan does not`),
  ];
}
