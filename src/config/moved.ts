// The `moved:` section: renames recorded in the stack (`- from: old` / `to: new`, instance
// addresses allowed), applied to the state by the next plan with no cloud change. A chain
// (a → b, b → c) moves a to c; a cycle, a target the stack does not declare, or a source it still
// declares is an error when the stack loads.
import { type Diagnostic } from "../diagnostics/diagnostic.js";
import { isAddress, splitAddress } from "../language/addresses.js";
import type { Move, ResourceDecl } from "./model.js";
import { errorAt as at, type SourceDocument } from "../yaml/source.js";
import { listed, NAMES_IN_DETAIL } from "../diagnostics/listed.js";

/** Whether the stack declares an address: a resource, an instance, or a forEach's name (the
 *  forEach names gathered once: a scan of the resources per move was quadratic). */
function declaredIn(resources: ReadonlyMap<string, ResourceDecl>): (address: string) => boolean {
  const forEachNames = new Set<string>();
  for (const r of resources.values()) if (r.each) forEachNames.add(r.decl);
  return (address) => resources.has(address) || forEachNames.has(address);
}

/** The entries as written, each checked for its form; undefined entries are skipped. */
function entries(src: SourceDocument, raw: unknown, diags: Diagnostic[]): { from: string; to: string; i: number }[] {
  if (!Array.isArray(raw)) return [];
  const out: { from: string; to: string; i: number }[] = [];
  raw.forEach((e, i) => {
    const m = e && typeof e === "object" ? (e as Record<string, unknown>) : {};
    let ok = typeof m.from === "string" && typeof m.to === "string"; // the schema said why not
    for (const k of ["from", "to"] as const) {
      const v = m[k];
      if (typeof v === "string" && !isAddress(v)) {
        diags.push(
          at(src, ["moved", i, k], `moved[${i}].${k}: "${v}" is not a resource address`, {
            detail: 'An address is a name, or name["key"] / name[0] for an instance of a forEach.',
          }),
        );
        ok = false;
      }
    }
    if (ok) out.push({ from: m.from as string, to: m.to as string, i });
  });
  return out;
}

/** The moves of a stack, each to its final address, or none after reporting why. */
export function loadMoved(
  src: SourceDocument,
  raw: unknown,
  resources: ReadonlyMap<string, ResourceDecl>,
  diags: Diagnostic[],
): Move[] {
  const list = entries(src, raw, diags);
  const declares = declaredIn(resources);
  // Named in each "not declared" error: made once (100,000 such errors would each go over them all).
  let named: string | undefined;
  const declarations = () =>
    (named ??= listed([...new Set([...resources.values()].map((r) => r.decl))], NAMES_IN_DETAIL));
  const next = new Map<string, { to: string; i: number }>();
  const before = diags.length;
  for (const e of list) {
    if (e.from === e.to) diags.push(at(src, ["moved", e.i], `moved[${e.i}]: moves ${e.from} to itself`));
    else if (next.has(e.from))
      diags.push(
        at(
          src,
          ["moved", e.i, "from"],
          `moved[${e.i}]: ${e.from} is moved twice (also by moved[${next.get(e.from)!.i}])`,
        ),
      );
    else next.set(e.from, { to: e.to, i: e.i });
    if (declares(e.from))
      diags.push(
        at(src, ["moved", e.i, "from"], `moved[${e.i}]: ${e.from} is still declared in the stack`, {
          detail: "A moved resource must be declared only under its new address (`to`).",
        }),
      );
  }
  const moves: Move[] = [];
  for (const e of list) {
    if (!next.has(e.from) || next.get(e.from)!.i !== e.i) continue;
    const seen = [e.from];
    let to = e.to;
    while (next.has(to) && !seen.includes(to)) {
      seen.push(to);
      to = next.get(to)!.to;
    }
    if (seen.includes(to)) {
      const first = seen.reduce((min, s) => Math.min(min, next.get(s)!.i), Infinity);
      if (e.from === to && e.i === first)
        diags.push(
          at(src, ["moved", e.i], `moved[${e.i}]: the moves form a cycle: ${[...seen, to].join(" -> ")}`, {
            detail: "Each address can be moved only once, to an address that is not moved back.",
          }),
        );
      continue;
    }
    if (!declares(to)) {
      const name = splitAddress(to).name;
      diags.push(
        at(src, ["moved", e.i, "to"], `moved[${e.i}]: ${to} is not declared in the stack`, {
          detail: resources.size ? `Resources: ${declarations()}.` : `Declare ${name} under resources:.`,
        }),
      );
      continue;
    }
    moves.push({ from: e.from, to, i: e.i });
  }
  return diags.length > before ? [] : moves;
}
