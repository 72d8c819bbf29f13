// What is shown or saved of a plan holds no secret: every string that contains a secret value has
// it replaced by "(sensitive value)", wherever it is (changes, policies, the access delta,
// variables, outputs, diagnostics). The plan that apply executes keeps the values; only the state
// stores them. Saved plans carry a salted hash of the inputs instead (checked by `apply FILE`).
import { createHash, randomBytes } from "node:crypto";
import type { Plan, State } from "../generated/schemas.js";
import { secretStrings, sensitive } from "../language/sensitive.js";
import type { ConfigDecl } from "./inputs.js";
import { canonicalJson } from "../base/canonical-json.js";

import { SENSITIVE_TEXT } from "../base/sensitive-text.js";

export { SENSITIVE_TEXT };

/** Secrets this short are replaced only where they are a whole string: "ab" must not garble
 *  every word that contains it. */
const MIN_SUBSTRING = 4;

/** `s` with every secret in it replaced. */
export function scrubText(s: string, secrets: readonly string[]): string {
  let out = s;
  for (const secret of secrets) {
    if (out === secret) return SENSITIVE_TEXT;
    if (secret.length >= MIN_SUBSTRING && out.includes(secret)) out = out.split(secret).join(SENSITIVE_TEXT);
  }
  return out;
}

/** A copy of `v` with every string scrubbed (map keys too). */
export function scrub<T>(v: T, secrets: readonly string[]): T {
  if (!secrets.length) return v;
  const walk = (x: unknown): unknown => {
    if (typeof x === "string") return scrubText(x, secrets);
    if (Array.isArray(x)) return x.map(walk);
    if (x && typeof x === "object") {
      const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(x) === null ? null : Object.prototype);
      for (const [k, y] of Object.entries(x)) out[scrubText(k, secrets)] = walk(y);
      return out;
    }
    return x;
  };
  return walk(v) as T;
}

/** The secrets in the order scrub wants them: longest first, so that a secret that contains
 *  another is replaced whole. Each also as JSON escapes it, where that differs (a forEach key
 *  with a quote or a backslash in an address: `name["a\\"b"]`). */
export function secretList(secrets: Iterable<string>): string[] {
  const all = new Set<string>();
  for (const s of secrets) all.add(s).add(JSON.stringify(s).slice(1, -1));
  return [...all].sort((a, b) => b.length - a.length);
}

/** sha256:{salt}:{hex} of the inputs' values (name → value, canonical JSON), with `salt` or a new one. */
export function inputsHash(config: ReadonlyMap<string, ConfigDecl>, salt = randomBytes(16).toString("hex")): string {
  const values: Record<string, unknown> = {};
  for (const c of config.values()) values[c.name] = c.value ?? null;
  return `sha256:${salt}:${createHash("sha256")
    .update(`${salt}:${canonicalJson(values)}`)
    .digest("hex")}`;
}

/** Whether the inputs hash as `hash` did (with its salt). */
export function sameInputs(config: ReadonlyMap<string, ConfigDecl>, hash: string): boolean {
  const salt = hash.split(":")[1] ?? "";
  return inputsHash(config, salt) === hash;
}

/** The plan as it may be shown and saved. */
export function redactPlan(plan: Plan, secrets: Iterable<string>): Plan {
  return scrub(plan, secretList(secrets));
}

/** The secret strings a state holds: its resources' sensitive inputs and its sensitive outputs. */
export function stateSecrets(state: State): string[] {
  const found = new Set<string>();
  for (const r of state.resources)
    for (const k of Object.keys(r.sensitive ?? {})) secretStrings(sensitive(r.inputs[k]), found);
  for (const n of state.sensitive_outputs ?? [])
    if (Object.hasOwn(state.outputs, n)) secretStrings(sensitive(state.outputs[n]), found);
  return secretList(found);
}

/** The state as it may be shown (`show`, `state list|show`): no secret in it. The state's
 *  secrets are remembered, so that whatever else this process prints is scrubbed of them too. */
export function redactState<T extends State | undefined>(state: T): T {
  if (!state) return state;
  const secrets = stateSecrets(state);
  rememberSecrets(secrets);
  return scrub(state, secrets);
}

/**
 * The one redaction every output channel passes through: the secrets this process has met (the
 * stack's secret inputs and what was computed from them, the state's secret fields, the secret
 * fields of claims). The engine remembers them as it meets them; the CLI's writers (stdout,
 * stderr, JSON documents and lines, diagnostics, the debug log) scrub what they print of them.
 * `output --show-sensitive` (asking for the values) turns it off for its process.
 */
class Redaction {
  private met = new Set<string>();
  private list: string[] = [];
  /** The secrets scrubbed from text: not those that read as a JSON number or literal, which
   *  could stand outside a string in a JSON document (`"serial": 1234`) and break it. Values
   *  are scrubbed of them (`value`) before they become text. */
  private textList: string[] = [];
  private off = false;

  remember(secrets: Iterable<string>): void {
    const before = this.met.size;
    for (const s of secrets) if (s !== "") this.met.add(s);
    if (this.met.size === before) return;
    this.list = secretList(this.met);
    this.textList = this.list.filter((s) => !JSON_LITERAL.test(s));
  }

  showSensitive(): void {
    this.off = true;
  }

  text(s: string): string {
    return this.off || !this.textList.length ? s : scrubText(s, this.textList);
  }

  value<T>(v: T): T {
    return this.off ? v : scrub(v, this.list);
  }
}

const JSON_LITERAL = /^(-?[0-9][0-9.eE+-]*|true|false|null)$/;

const redaction = new Redaction();

/** Remembers `secrets` as strings no output of this process may hold. */
export function rememberSecrets(secrets: Iterable<string>): void {
  redaction.remember(secrets);
}

/** `s` as it may be printed: every secret met so far replaced. */
export function redactText(s: string): string {
  return redaction.text(s);
}

/** A copy of `v` (a JSON document, an event) as it may be printed: every string scrubbed. */
export function redactValue<T>(v: T): T {
  return redaction.value(v);
}

/** For `output --show-sensitive`: this process prints secret values. */
export function showSensitiveValues(): void {
  redaction.showSensitive();
}
