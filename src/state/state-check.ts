// Whether a parsed state document is valid against schemas/state.schema.json, without ajv: the
// checks its compiled validator makes, in plain code, answering only "certainly valid". A state
// of 100,000 resources went through ajv's validator on every read; the plan's read now asks this
// first and leaves anything it does not accept to ajv, whose errors are the diagnostics.
// Kept to the schema by test/state/state-check.test.ts (random and awkward documents).

const MAX_SERIAL = 9007199254740991;

/** ajv's "type": "object". */
function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** ajv's "type": "integer". */
function isInteger(v: unknown): v is number {
  return typeof v === "number" && !(v % 1) && !isNaN(v);
}

function isStringArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== "string") return false;
  return true;
}

function stateKey(k: string): boolean {
  return k === "version" || k === "lineage" || k === "serial" || k === "stack" || k === "resources" || k === "outputs" || k === "sensitive_outputs";
}

function resourceKey(k: string): boolean {
  return k === "address" || k === "type" || k === "id" || k === "inputs" || k === "outputs" || k === "dependencies" || k === "protect" || k === "sensitive" || k === "adopted";
}

/** #/definitions/StateResource */
function validResource(r: unknown): boolean {
  if (!isObject(r)) return false;
  for (const k in r) if (!resourceKey(k)) return false;
  if (typeof r.address !== "string" || typeof r.type !== "string" || typeof r.id !== "string") return false;
  if (!isObject(r.inputs) || !isObject(r.outputs) || !isStringArray(r.dependencies)) return false;
  if (r.protect !== undefined && typeof r.protect !== "boolean") return false;
  if (r.adopted !== undefined && typeof r.adopted !== "boolean") return false;
  const sensitive = r.sensitive;
  if (sensitive === undefined) return true;
  if (!isObject(sensitive)) return false;
  for (const k in sensitive) if (sensitive[k] !== true) return false;
  return true;
}

/** True only when validate("state.schema.json", v) finds no error; false says nothing (ask ajv). */
export function certainlyValidState(v: unknown): boolean {
  if (!isObject(v)) return false;
  for (const k in v) if (!stateKey(k)) return false;
  if (v.version !== 1) return false;
  if (typeof v.lineage !== "string" || v.lineage.length < 1) return false;
  const serial = v.serial;
  if (!isInteger(serial) || serial > MAX_SERIAL || serial < 0) return false;
  if (typeof v.stack !== "string" || !isObject(v.outputs)) return false;
  if (v.sensitive_outputs !== undefined && !isStringArray(v.sensitive_outputs)) return false;
  const resources = v.resources;
  if (!Array.isArray(resources)) return false;
  for (let i = 0; i < resources.length; i++) if (!validResource(resources[i])) return false;
  return true;
}
