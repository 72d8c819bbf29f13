// The seal of a saved plan (`plan --out FILE`): a sha256 digest of its canonical content and, when
// CONVERGE_PLAN_KEY is set, an HMAC-SHA256 signature of the same bytes.
//
// Canonical content: the plan without its `digest` and `signature` fields, serialised as JSON
// with the keys of every object sorted (by UTF-16 code units, JavaScript's default sort), no
// white space, arrays in their order, properties whose value is undefined left out; in UTF-8.
// Parsing a saved file and serialising it this way gives back the bytes that were sealed.
// digest = "sha256:" + hex sha256(content); signature = "hmac-sha256:" + hex hmac(key, content).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { dirname, resolve } from "node:path";
import { writeFileAtomicSync } from "../fs/atomic-file.js";
import { makeDirsSync } from "../state/regular-files.js";
import type { Plan } from "../generated/schemas.js";

export const PLAN_KEY_ENV = "CONVERGE_PLAN_KEY";

/** The signing key from the environment; an empty value counts as unset. Never print it. */
export function planKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = env[PLAN_KEY_ENV];
  return key ? key : undefined;
}

/** JSON with sorted object keys and no white space (see the header). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return scalarJson(value);
  // JSON.stringify of a copy whose keys are inserted in sorted order: the same text, in half the
  // time of building it here (sealing a plan of 100,000 resources took seconds). Object keys that
  // are array indexes (JavaScript enumerates them first, in numeric order) or "__proto__" (an
  // assignment would not create it) are left to the general writer.
  const copy = sortedCopy(value);
  return copy === UNORDERED ? canonicalText(value) : JSON.stringify(copy);
}

function scalarJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error(`canonicalJson: ${typeof value} has no JSON form`);
  return text;
}

const UNORDERED = Symbol("unordered");
const INDEX_LIKE = /^(?:0|[1-9][0-9]*)$/;

/** `value` with every object's keys in sorted order and undefined left out (in arrays: null);
 *  UNORDERED when some key cannot be put in that order. Throws as canonicalText does. */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== "object") {
    if (typeof value === "function" || typeof value === "symbol") scalarJson(value);
    return value;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const c = v === undefined ? null : sortedCopy(v);
      if (c === UNORDERED) return UNORDERED;
      out[i] = c;
    }
    return out;
  }
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined) continue;
    if (k === "__proto__" || INDEX_LIKE.test(k)) return UNORDERED;
    const c = sortedCopy(v);
    if (c === UNORDERED) return UNORDERED;
    out[k] = c;
  }
  return out;
}

/** The general writer (any keys). */
function canonicalText(value: unknown): string {
  if (value === null || typeof value !== "object") return scalarJson(value);
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalText(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalText(obj[k])}`).join(",")}}`;
}

/** The bytes the digest and the signature are computed over. */
export function sealedContent(plan: Plan): Buffer {
  const { digest: _digest, signature: _signature, ...content } = plan;
  return Buffer.from(canonicalJson(content), "utf8");
}

function digestOf(content: Buffer): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

function signatureOf(content: Buffer, key: string): string {
  return `hmac-sha256:${createHmac("sha256", key).update(content).digest("hex")}`;
}

/** The plan with its digest and, given a key, its signature (any old seal replaced). */
export function sealPlan(plan: Plan, key: string | undefined): Plan {
  const content = sealedContent(plan);
  const { digest: _digest, signature: _signature, ...rest } = plan;
  return { ...rest, digest: digestOf(content), ...(key ? { signature: signatureOf(content, key) } : {}) };
}

export type SealProblem = "no-digest" | "digest-mismatch" | "no-signature" | "signature-mismatch";

export interface SealCheck {
  problem?: SealProblem;
  /** The plan is signed but no key was given, so its signature was not checked. */
  unchecked?: boolean;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Checks the digest, then (with a key) the signature. */
export function verifySeal(plan: Plan, key: string | undefined): SealCheck {
  if (!plan.digest) return { problem: "no-digest" };
  const content = sealedContent(plan);
  if (!sameText(plan.digest, digestOf(content))) return { problem: "digest-mismatch" };
  if (!key) return plan.signature ? { unchecked: true } : {};
  if (!plan.signature) return { problem: "no-signature" };
  if (!sameText(plan.signature, signatureOf(content, key))) return { problem: "signature-mismatch" };
  return {};
}

/** Writes a (sealed) plan to `file` (`plan --out`): atomically, mode 0600, creating its directory (0700). */
export function savePlan(file: string, p: Plan): void {
  const path = resolve(file);
  makeDirsSync(dirname(path));
  writeFileAtomicSync(path, JSON.stringify(p, null, 2) + "\n");
}
