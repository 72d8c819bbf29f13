// Principals that look like other principals: `user:аlice@example.com` with a Cyrillic "а" reads
// exactly like `user:alice@example.com`, and a reviewer would approve access for someone they never
// meant. A principal is suspect when it holds characters beyond ASCII, letters of more than one
// script, or invisible or bidi characters, or when it is confusable with another principal: the
// same after Unicode's confusables mapping (UTS #39 "skeleton", with the table of the unhomoglyph
// package, generated from Unicode's confusables.txt) although they are two principals. Each suspect
// character is spelled out with its code point and Unicode name (the unicode-name package). Both
// tables are loaded on first use: the names only for a principal beyond ASCII.
import { createRequire } from "node:module";
import { domainToUnicode } from "node:url";
import type { Lookalike } from "../generated/schemas.js";
import { memberKey } from "./members.js";

const NON_ASCII = /[^\u0020-\u007e]/;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u115f\u1160\u180e\u3164\uffa0]/u;
/** The scripts told apart by name; letters of any other script count as "another script". */
const SCRIPT_NAMES = ["Latin", "Cyrillic", "Greek", "Armenian", "Cherokee", "Georgian", "Coptic"];
const SCRIPTS: readonly [string, RegExp][] = SCRIPT_NAMES.map((s): [string, RegExp] => [
  s,
  new RegExp(`\\p{Script=${s}}`, "u"),
]);

/** The scripts of the letters of `text`, by name. */
function scriptsOf(text: string): string[] {
  const out = new Set<string>();
  for (const c of text) {
    if (!/\p{L}/u.test(c)) continue;
    out.add(SCRIPTS.find(([, re]) => re.test(c))?.[0] ?? "another script");
  }
  return [...out].sort();
}

/** A domain label in punycode: the ASCII form of a label beyond ASCII. */
const PUNYCODE_LABEL = /(?<![A-Za-z0-9-])xn--[A-Za-z0-9-]+/g;

/** `principal` with its punycode labels decoded: `domain:xn--exmple-4nf.com` is what a browser or
 *  a mail client shows as `domain:exаmple.com` (Google takes domains in ASCII only). */
export function decoded(principal: string): string {
  if (!principal.includes("xn--")) return principal;
  return principal.replace(PUNYCODE_LABEL, (label) => domainToUnicode(label) || label);
}

/** Why `principal` may look like another, from its own characters (empty when it is plain ASCII). */
export function suspectReasons(principal: string): string[] {
  const shown = decoded(principal);
  if (!NON_ASCII.test(shown)) return [];
  const reasons = [shown === principal ? "characters beyond ASCII" : `punycode that reads ${JSON.stringify(shown)}`];
  // Judged part by part (the type, an email's local part, each label of a domain): `иван@example.com`
  // is two scripts in two parts, `exаmple` two in one.
  const mixed = shown
    .split(/[:@./]/)
    .map(scriptsOf)
    .find((scripts) => scripts.length > 1);
  if (mixed) reasons.push(`mixed scripts (${mixed.join(", ")})`);
  if (INVISIBLE.test(shown)) reasons.push("invisible or bidi characters");
  return reasons;
}

type NameOf = (c: string) => string | undefined;
let names: NameOf | null | undefined;

/** The Unicode name of a character, or undefined when the names cannot be loaded. The table
 *  (1.6 MB) is loaded on first use only: most plans have no principal beyond ASCII. */
function unicodeName(c: string): string | undefined {
  if (names === undefined) {
    try {
      const mod = load("unicode-name") as { unicodeName: NameOf };
      names = mod.unicodeName;
    } catch {
      names = null; // a Node without require() of ES modules: code points without names
    }
  }
  return names?.(c) ?? undefined;
}

/** `U+0430 CYRILLIC SMALL LETTER A` for each distinct character of `text` (its punycode decoded)
 *  beyond ASCII. */
export function codePoints(text: string): string[] {
  const out: string[] = [];
  for (const c of new Set(decoded(text))) {
    if (!NON_ASCII.test(c)) continue;
    const hex = c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    const name = unicodeName(c);
    out.push(name ? `U+${hex} ${name}` : `U+${hex}`);
  }
  return out;
}

const load = createRequire(import.meta.url);

/** Unicode's confusables, character → prototype, and the ASCII characters among them with theirs
 *  (none of which holds an ASCII confusable: replacing them one after another is one mapping). */
let confusables: { map: Map<string, string>; ascii: [string, string][] } | undefined;

function confusableTable(): { map: Map<string, string>; ascii: [string, string][] } {
  if (confusables) return confusables;
  const map = new Map(Object.entries(load("unhomoglyph/data.json") as Record<string, string>));
  const ascii = [...map].filter(([c]) => !NON_ASCII.test(c));
  return (confusables = { map, ascii });
}

/** What two principals are compared by: their keys (case as Google compares it), decomposed,
 *  with every confusable character mapped to its prototype. */
export function skeleton(principal: string): string {
  return keySkeleton(decoded(memberKey(principal)));
}

function keySkeleton(key: string): string {
  const { map, ascii } = confusableTable();
  // Most principals are ASCII: a replace of each of the few ASCII confusables ("1" → "l", "m" → "rn").
  if (!NON_ASCII.test(key)) {
    let out = key;
    for (const [c, prototype] of ascii) if (out.includes(c)) out = out.replaceAll(c, prototype);
    return out;
  }
  let out = "";
  for (const c of key.normalize("NFD")) out += map.get(c) ?? c;
  return out.normalize("NFD");
}

/**
 * The suspect principals among `shown` (those a plan shows: granted, revoked, keeping access),
 * each confusable with another principal of `shown` or `others` (every member of the policies the
 * plan touches) said so. In the order of `shown`, each once.
 */
export function lookalikes(shown: Iterable<string>, others: Iterable<string> = []): Lookalike[] {
  /** The shown principals by key, and the others alike to one of them. */
  const byKey = new Map<string, string>();
  const otherByKey = new Map<string, string>();
  /** The keys of each skeleton of a shown principal: one key as it is, more in a list. */
  const bySkeleton = new Map<string, string | string[]>();
  const group = (s: string, key: string) => {
    const g = bySkeleton.get(s);
    if (g === undefined) bySkeleton.set(s, key);
    else if (typeof g === "string") bySkeleton.set(s, [g, key]);
    else g.push(key);
  };
  for (const p of shown) {
    const key = memberKey(p);
    if (byKey.has(key)) continue;
    byKey.set(key, p);
    group(keySkeleton(decoded(key)), key);
  }
  // The others only matter when alike to a shown one: looked up, not kept (a plan's policies may
  // hold hundreds of thousands of members).
  for (const p of others) {
    const key = memberKey(p);
    if (byKey.has(key) || otherByKey.has(key)) continue;
    const s = keySkeleton(decoded(key));
    if (!bySkeleton.has(s)) continue;
    otherByKey.set(key, p);
    group(s, key);
  }
  const alikeByKey = new Map<string, string[]>();
  for (const g of bySkeleton.values()) {
    if (typeof g === "string") continue;
    const principals = g.map((x) => byKey.get(x) ?? otherByKey.get(x)!);
    g.forEach((k, i) => {
      if (byKey.has(k)) alikeByKey.set(k, principals.filter((_, j) => j !== i).sort());
    });
  }
  const out: Lookalike[] = [];
  for (const [key, principal] of byKey) {
    const reasons = suspectReasons(principal);
    const alike = alikeByKey.get(key);
    if (!reasons.length && !alike) continue;
    out.push({ principal, reasons, code_points: codePoints(principal), ...(alike ? { looks_like: alike } : {}) });
  }
  return out;
}

/** `looks like another principal (characters beyond ASCII, …: U+0430 CYRILLIC SMALL LETTER A)`. */
export function lookalikeText(l: Lookalike): string {
  const why = [...l.reasons];
  if (l.looks_like?.length) why.push(`confusable with ${l.looks_like.join(", ")}`);
  const spelled = l.code_points.length ? `: ${l.code_points.join(", ")}` : "";
  return `looks like another principal (${why.join("; ")})${spelled}`;
}
