// Seeded random IAM inputs and policies, awkward ones included (unknown parts, keys in another
// order, objects without a prototype), and a comparison that sees key order: for the property
// tests that hold the plan's hot path to its definitions before (./plan-hot-path-before.ts).
import { UNKNOWN } from "../../../src/language/expressions.js";
import type { IamDriver, IamInputs } from "../../../src/drivers/types.js";
import type { Binding, Condition, Policy } from "../../../src/generated/schemas.js";
import { epName, rpName } from "../../fixtures/builders.js";

export type Rand = () => number;
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
export const some = <T>(r: Rand, n: number, f: () => T): T[] => Array.from({ length: Math.floor(r() * (n + 1)) }, f);

export const MEMBERS = [
  "user:a@x.com",
  "user:A@x.com",
  "group:g@x.com",
  "serviceAccount:s@p.iam.gserviceaccount.com",
  "allUsers",
  "deleted:user:d@x.com?uid=1",
  "domain:x.com",
  "user:b@x.com",
];
export const NAMES = [rpName("a"), rpName("b"), epName("a"), "short", ""];
export const CONDITIONS: (Condition | undefined)[] = [
  undefined,
  undefined,
  { title: "t", expression: "e" },
  { title: "t", expression: "e", description: "d" },
  { title: "u", expression: "e" },
];

/** Every value as [its keys in order, values]: equality that sees key order, prototypes and unknowns. */
export function shape(v: unknown): unknown {
  if (v === UNKNOWN) return "<unknown>";
  if (Array.isArray(v)) return ["array", v.map(shape)];
  if (v && typeof v === "object")
    return [
      "object",
      Object.getPrototypeOf(v) === null,
      Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    ];
  return v;
}

export function members(r: Rand): unknown[] {
  return some(r, 4, () => (r() < 0.05 ? UNKNOWN : pick(r, MEMBERS)));
}

export function inputs(r: Rand, d: IamDriver): IamInputs {
  const out: Record<string, unknown> = { name: r() < 0.05 ? UNKNOWN : pick(r, NAMES) };
  if (d.ownership === "policy") {
    out.bindings = r() < 0.05 ? UNKNOWN : some(r, 3, () => binding(r));
    if (r() < 0.5)
      out.auditConfigs =
        r() < 0.1
          ? UNKNOWN
          : some(r, 1, () => ({
              service: "allServices",
              auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: members(r).filter((m) => m !== UNKNOWN) }],
            }));
  } else {
    out.role = r() < 0.05 ? UNKNOWN : pick(r, ["roles/a", "roles/b"]);
    if (d.ownership === "binding") {
      if (r() < 0.9) out.members = r() < 0.05 ? UNKNOWN : members(r);
    } else out.member = r() < 0.05 ? UNKNOWN : pick(r, MEMBERS);
  }
  const c = pick(r, CONDITIONS);
  if (c) out.condition = r() < 0.1 ? { ...c } : c;
  // Awkward shapes: keys in another order, an object without a prototype.
  if (r() < 0.1) return Object.assign(Object.create(null), out) as IamInputs;
  if (r() < 0.2) return Object.fromEntries(Object.entries(out).reverse()) as unknown as IamInputs;
  return out as unknown as IamInputs;
}

export function binding(r: Rand): Binding {
  const c = pick(r, CONDITIONS);
  return {
    role: pick(r, ["roles/a", "roles/b", "roles/c"]),
    members: members(r).filter((m) => m !== UNKNOWN) as string[],
    ...(c ? { condition: c } : {}),
  };
}

export function policy(r: Rand): Policy {
  const p: Policy = { version: 1, etag: pick(r, ["e1", "e2", ""]) };
  if (r() < 0.9) p.bindings = some(r, 6, () => binding(r));
  return p;
}

export function known(v: IamInputs, r: Rand): IamInputs {
  // The refresh observes state inputs (JSON data): mostly without unknowns.
  return r() < 0.8 ? (withoutUnknowns(v) as IamInputs) : v;
}

/** JSON data: unknowns replaced by a member. */
export function withoutUnknowns(v: unknown): unknown {
  if (v === UNKNOWN) return "user:was-unknown@x.com";
  if (Array.isArray(v)) return v.map(withoutUnknowns);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withoutUnknowns(x)]));
  return v;
}

/** What `f` gives, or the error it throws. */
export function outcome(f: () => unknown): unknown {
  try {
    return ["ok", shape(f())];
  } catch (e) {
    return ["threw", (e as Error).constructor.name, (e as Error).message];
  }
}
