// The state file format (SPEC section 7): creating and serialising State documents (parsing one
// is in ./parse-state.ts).
import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { State, StateResource } from "../generated/schemas.js";
import { validate, type ErrorObject } from "../schemas/index.js";
import { isPlainObject } from "../base/plain-object.js";

export const STATE_FORMAT_VERSION = 1;

/** {stackDir}/state/{stackName}.json, where stackDir is the directory of the stack file. */
export function defaultStatePath(stackDir: string, stackName: string): string {
  return join(stackDir, "state", `${stackName}.json`);
}

/** An empty state for a stack that has never been applied: a fresh lineage, serial 0. */
export function newState(stack: string): State {
  return { version: 1, lineage: randomUUID(), serial: 0, stack, resources: [], outputs: {} };
}

// Keys in schema order; anything else (only possible inside free-form objects) is sorted.
const STATE_KEYS = ["version", "lineage", "serial", "stack", "resources", "outputs", "sensitive_outputs", "settled"];
const RESOURCE_KEYS = ["address", "type", "id", "inputs", "outputs", "dependencies", "protect", "sensitive"];

/** The keys of `obj` (`own`, its Object.keys) in the order written: `first`, then the rest sorted. */
function orderedKeys(obj: Record<string, unknown>, own: string[], first: readonly string[]): string[] {
  const rest = first.length ? own.filter((k) => !first.includes(k)) : own;
  let sorted = true;
  for (let i = 1; i < rest.length && sorted; i++) sorted = rest[i - 1]! < rest[i]!;
  const tail = sorted ? rest : [...rest].sort();
  return first.length ? [...first.filter((k) => Object.hasOwn(obj, k)), ...tail] : tail;
}

/**
 * For JSON.stringify: `obj` with its keys in the order written and `inner` applied to each value.
 * `obj` itself when that changes nothing (its keys already in that order, `inner` giving back
 * every value, no own toJSON): copying what already is in order was most of a save's garbage.
 * Otherwise a copy, which holds any key (__proto__ too).
 */
function ordered(
  obj: Record<string, unknown>,
  first: readonly string[],
  inner: (key: string, v: unknown) => unknown,
): Record<string, unknown> {
  const own = Object.keys(obj);
  const keys = orderedKeys(obj, own, first);
  const values: unknown[] = [];
  let same = keys.length === own.length && !Object.hasOwn(obj, "toJSON");
  for (let i = 0; i < keys.length; i++) {
    const v = obj[keys[i]!];
    const x = inner(keys[i]!, v);
    values.push(x);
    if (same && (keys[i] !== own[i] || !Object.is(x, v))) same = false;
  }
  if (same) return obj;
  const out: Record<string, unknown> = Object.create(null);
  for (let i = 0; i < keys.length; i++) out[keys[i]!] = values[i];
  return out;
}

/** For JSON.stringify: `v` with every plain object's keys sorted; `v` itself where nothing changes. */
function sortDeep(v: unknown): unknown {
  if (Array.isArray(v)) {
    let out: unknown[] | undefined = Object.hasOwn(v, "toJSON") ? [] : undefined;
    for (let i = 0; i < v.length; i++) {
      const x = sortDeep(v[i]);
      if (!out && !Object.is(x, v[i])) out = v.slice(0, i);
      out?.push(x);
    }
    return out ?? v;
  }
  if (isPlainObject(v)) return ordered(v, [], (_k, x) => sortDeep(x));
  return v;
}

function serializeWhole(state: State): string {
  const top = ordered(state as unknown as Record<string, unknown>, STATE_KEYS, (k, v) =>
    k === "resources" && Array.isArray(v)
      ? v.map((r) => (isPlainObject(r) ? ordered(r, RESOURCE_KEYS, (_k, x) => sortDeep(x)) : sortDeep(r)))
      : sortDeep(v),
  );
  return JSON.stringify(top, null, 2) + "\n";
}

// Resources sealed by their owner: a sealed resource is the state's resource as read back from
// its text (JSON.parse of it), deeply frozen, never to change, its text kept. Apply saves the
// state after steps, and re-serialising, re-checking and re-parsing 100,000 unchanged resources
// at each save (or holding several copies of each) was most of its time and memory.
const sealedText = new WeakMap<object, string>();

function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== "object" || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

/**
 * The sealed copy of a state resource: `JSON.parse` of its text in the state file, deeply
 * frozen, with that text cached for serializeState (re-serialising it gives the same text).
 * A resource already sealed is its own copy. Not an object once serialised: returned as it is.
 */
export function sealedCopy<T extends StateResource>(r: T): T {
  if (isSealed(r)) return r;
  const text = resourceText(r);
  const value = JSON.parse(text) as unknown;
  if (value === null || typeof value !== "object") return r;
  deepFreeze(value);
  sealedText.set(value, text);
  return value as T;
}

const NESTED_HEAD = "[\n  [\n    ";
const NESTED_TAIL = "\n  ]\n]";

/** A resource's text as an element of the top-level "resources" array (indented by 4). */
function resourceText(r: unknown): string {
  const hit = isSealed(r) ? sealedText.get(r as object) : undefined;
  if (hit !== undefined) return hit;
  const value = isPlainObject(r) ? ordered(r, RESOURCE_KEYS, (_k, x) => sortDeep(x)) : sortDeep(r);
  // Written two arrays deep, the value is indented by 4 as it is in the state (an undefined
  // value is written null), with no second pass over the text to indent it.
  const text = JSON.stringify([[value]], null, 2);
  return text.slice(NESTED_HEAD.length, text.length - NESTED_TAIL.length);
}

function isSealed(r: unknown): boolean {
  return r !== null && typeof r === "object" && sealedText.has(r);
}

/** Whether serializeState can reuse the text of some of the state's resources (sealedCopy). */
export function hasSealedResources(state: State): boolean {
  const resources = (state as unknown as Record<string, unknown>).resources;
  return Array.isArray(resources) && resources.some(isSealed);
}

const sealedValid = new WeakSet<object>();

/**
 * The problems of a state as written: `validate("state.schema.json", JSON.parse(serializeState(state)))`,
 * but checking the rest of the state and each resource on its own, and a sealed resource (which
 * is its own parsed text) once (the resources are independent items of the schema). When
 * something is wrong, the whole state is checked as before, so the errors are the same.
 */
export function stateProblems(state: State): ErrorObject[] {
  const resources = (state as unknown as Record<string, unknown>).resources;
  const whole = () => validate("state.schema.json", JSON.parse(serializeState(state)));
  if (!Array.isArray(resources)) return whole();
  if (validate("state.schema.json", JSON.parse(serializeWhole({ ...state, resources: [] })) as unknown).length)
    return whole();
  for (let i = 0; i < resources.length; i++) {
    const r: unknown = resources[i];
    const sealed = isSealed(r);
    if (sealed && sealedValid.has(r as object)) continue;
    if (validate("state.schema.json#/definitions/StateResource", sealed ? r : JSON.parse(resourceText(r))).length)
      return whole();
    if (sealed) sealedValid.add(r as object);
  }
  return [];
}

/**
 * JSON.parse(serializeState(state)): the state as read back from its text. The resources that
 * are sealed come back as themselves (frozen, shared between calls).
 */
export function parsedState(state: State): State {
  const resources = (state as unknown as Record<string, unknown>).resources;
  if (!Array.isArray(resources)) return JSON.parse(serializeState(state)) as State;
  const out = JSON.parse(serializeWhole({ ...state, resources: [] })) as Record<string, unknown>;
  const items: unknown[] = [];
  for (let i = 0; i < resources.length; i++) {
    const r: unknown = resources[i];
    items.push(isSealed(r) ? r : (JSON.parse(resourceText(r)) as unknown));
  }
  out.resources = items;
  return out as unknown as State;
}

const RESOURCES_MARKER = "\u0000converge:resources\u0000";
const ITEMS_OPEN = "[\n    ";
const ITEMS_SEPARATOR = ",\n    ";
const ITEMS_CLOSE = "\n  ]";

/**
 * A state with sealed resources as the text before its resources' array and after it, and the
 * resources (each written by resourceText); undefined when the state has none sealed (or a key
 * that holds the marker).
 */
function sealedLayout(state: State): { before: string; after: string; resources: readonly unknown[] } | undefined {
  if (!hasSealedResources(state)) return undefined;
  const resources = (state as unknown as { resources: unknown[] }).resources;
  const head = serializeWhole({ ...state, resources: RESOURCES_MARKER } as unknown as State);
  const quoted = JSON.stringify(RESOURCES_MARKER);
  const at = head.indexOf(quoted);
  if (at < 0 || head.lastIndexOf(quoted) !== at) return undefined;
  return { before: head.slice(0, at), after: head.slice(at + quoted.length), resources };
}

/**
 * The on-disk text of a state: top-level and resource keys in schema order, every other object's
 * keys sorted, 2-space indent, trailing newline. Array order (resources, dependencies) is kept.
 */
export function serializeState(state: State): string {
  // The same text as serializeWhole(state), with each resource's text from resourceText.
  const layout = sealedLayout(state);
  if (!layout) return serializeWhole(state);
  const items: string[] = [];
  for (let i = 0; i < layout.resources.length; i++) items.push(resourceText(layout.resources[i]));
  return `${layout.before}${ITEMS_OPEN}${items.join(ITEMS_SEPARATOR)}${ITEMS_CLOSE}${layout.after}`;
}

// The UTF-8 bytes of sealed resources' texts, made the first time a save writes them: encoding
// the whole text of a large state again at every save (100 MB at 100,000 resources) was the
// largest part of a save and held up the cloud calls in flight.
const sealedBytes = new WeakMap<object, Buffer>();
const SEPARATOR_BYTES = Buffer.from(ITEMS_SEPARATOR);

/** Sealed resources' bytes are encoded into slabs of this size: Buffer.from takes a new 8 KiB
 *  pool every few resources, and allocating those was most of encoding 100,000 of them. */
const SLAB_BYTES = 1 << 20;
let slab = Buffer.alloc(0);
let slabUsed = 0;

/** `text` as UTF-8, in a slab shared with other sealed resources' bytes (never changed once written). */
function slabEncoded(text: string): Buffer {
  const size = Buffer.byteLength(text, "utf8");
  if (size > SLAB_BYTES / 8) return Buffer.from(text, "utf8");
  if (slabUsed + size > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const bytes = slab.subarray(slabUsed, slabUsed + slab.write(text, slabUsed, "utf8"));
  slabUsed += size;
  return bytes;
}

function resourceBytes(r: unknown): Buffer {
  if (!isSealed(r)) return Buffer.from(resourceText(r));
  let bytes = sealedBytes.get(r as object);
  if (!bytes) sealedBytes.set(r as object, (bytes = slabEncoded(resourceText(r))));
  return bytes;
}

/**
 * serializeState(state) as UTF-8, in pieces whose concatenation is exactly its bytes (the text
 * is cut only at ASCII characters): what a store writes to a file.
 */
export function serializeStateBytes(state: State): Buffer[] {
  const layout = sealedLayout(state);
  if (!layout) return [Buffer.from(serializeWhole(state))];
  const out: Buffer[] = [Buffer.from(layout.before + ITEMS_OPEN)];
  for (let i = 0; i < layout.resources.length; i++) {
    if (i > 0) out.push(SEPARATOR_BYTES);
    out.push(resourceBytes(layout.resources[i]));
  }
  out.push(Buffer.from(ITEMS_CLOSE + layout.after));
  return out;
}

/**
 * The text serializeState gives for the same state with another serial, from `text` (its
 * serialisation with `serial`); undefined when `text` does not have the expected form. The
 * top-level keys come first in schema order, so the first `"serial":` at indent 2 is the state's.
 */
export function withSerial(text: string, serial: number, newSerial: number): string | undefined {
  const from = `\n  "serial": ${JSON.stringify(serial)},\n`;
  const i = text.indexOf(from);
  if (i < 0 || !Number.isSafeInteger(serial) || !Number.isSafeInteger(newSerial)) return undefined;
  return `${text.slice(0, i)}\n  "serial": ${JSON.stringify(newSerial)},\n${text.slice(i + from.length)}`;
}
