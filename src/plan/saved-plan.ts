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
import { capText, MAX_DATA_BYTES } from "../fs/input-file.js";
import { error, UserError } from "../diagnostics/diagnostic.js";
import { DATA_TOO_DEEP_DETAIL, jsonDepthError, MAX_DATA_DEPTH } from "../diagnostics/nesting.js";
import { jsonChunks } from "../diagnostics/terminal-text.js";
import { makeDirsSync } from "../fs/regular-files.js";
import type { Plan } from "../generated/schemas.js";
import { textPieces } from "../base/text-pieces.js";
import { canonicalChunks } from "../base/canonical-json.js";

export const PLAN_KEY_ENV = "CONVERGE_PLAN_KEY";

/** The signing key from the environment; an empty value counts as unset. Never print it. */
export function planKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = env[PLAN_KEY_ENV];
  return key ? key : undefined;
}

/** Characters of canonical text handed to the hashes at once. */
const HASH_PIECE = 1 << 16;

/** The digest and, given a key, the signature of the plan's canonical content (the plan without
 *  its seal), hashed in pieces as the text is made. */
function sealOf(plan: Plan, key: string | undefined): { digest: string; signature?: string } {
  const { digest: _digest, signature: _signature, ...content } = plan;
  const sha = createHash("sha256");
  const hmac = key ? createHmac("sha256", key) : undefined;
  const update = (text: string) => {
    sha.update(text, "utf8");
    hmac?.update(text, "utf8");
  };
  for (const piece of textPieces(canonicalChunks(content), HASH_PIECE)) update(piece);
  return { digest: `sha256:${sha.digest("hex")}`, ...(hmac ? { signature: `hmac-sha256:${hmac.digest("hex")}` } : {}) };
}

/** The plan with its digest and, given a key, its signature (any old seal replaced). */
export function sealPlan(plan: Plan, key: string | undefined): Plan {
  const { digest: _digest, signature: _signature, ...rest } = plan;
  return { ...rest, ...sealOf(plan, key) };
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

/**
 * Refuses a saved plan (`data`, JSON.parse of `text`) whose lists and maps nest more than
 * MAX_DATA_DEPTH levels: a user error at the first one too deep. Called before anything else reads
 * the plan: the schema, the seal's canonical text and the renderers walk it recursively.
 */
export function refuseDeepPlan(text: string, data: unknown, file: string): void {
  const deep = jsonDepthError(text, data, MAX_DATA_DEPTH);
  if (!deep) return;
  const detail = `${DATA_TOO_DEEP_DETAIL} Nothing was applied.`;
  const where = { file, line: deep.line, column: deep.column, detail };
  throw new UserError(error(`the saved plan ${file} is ${deep.summary}`, where));
}

/** Checks the digest, then (with a key) the signature. */
export function verifySeal(plan: Plan, key: string | undefined): SealCheck {
  if (!plan.digest) return { problem: "no-digest" };
  const seal = sealOf(plan, key);
  if (!sameText(plan.digest, seal.digest)) return { problem: "digest-mismatch" };
  if (!key) return plan.signature ? { unchecked: true } : {};
  if (!plan.signature) return { problem: "no-signature" };
  if (!sameText(plan.signature, seal.signature!)) return { problem: "signature-mismatch" };
  return {};
}

/**
 * Writes a (sealed) plan to `file` (`plan --out`): atomically, mode 0600, creating its directory
 * (0700). The text is JSON.stringify(p, null, 2)'s, with the characters a terminal could act on
 * escaped (jsonChunks), written in pieces as it is made. A plan whose file would be larger than
 * `apply` and `show` read (`maxBytes`, MAX_DATA_BYTES) is not saved: a user error, and no file.
 */
export function savePlan(file: string, p: Plan, opts: { maxBytes?: number } = {}): void {
  const path = resolve(file);
  makeDirsSync(dirname(path));
  writeFileAtomicSync(path, capped(planFileChunks(p), opts.maxBytes ?? MAX_DATA_BYTES));
}

function* planFileChunks(p: Plan): Generator<string> {
  yield* jsonChunks(p, 2);
  yield "\n";
}

/** The chunks, until their UTF-8 bytes pass `maxBytes`: then a user error. */
function* capped(chunks: Iterable<string>, maxBytes: number): Generator<string> {
  let bytes = 0;
  for (const chunk of chunks) {
    bytes += Buffer.byteLength(chunk, "utf8");
    if (bytes > maxBytes) throw tooLargeToSave(maxBytes);
    yield chunk;
  }
}

function tooLargeToSave(maxBytes: number): UserError {
  return new UserError(
    error("the plan is too large to save", {
      code: "plan/too-large-to-save",
      detail:
        `Its file would be larger than ${capText(maxBytes)}, the most \`converge apply\` and \`converge ` +
        `show\` read. Nothing was saved. Plan part of the stack at a time (--target), or split it into ` +
        `smaller stacks.`,
    }),
  );
}
