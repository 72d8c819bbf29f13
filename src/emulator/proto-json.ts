// Request bodies parsed as Google's front end parses proto3 JSON
// (https://protobuf.dev/programming-guides/json/): a field may be named in lowerCamelCase or by
// its proto (snake_case) name; `null` is the field's default (absent); int32 values may be sent
// as strings; enums as names or numbers; bytes as standard or URL-safe base64, padded or not.
// An unknown field is refused with Google's message. The result uses lowerCamel names only.
import { invalidArgument } from "./errors.js";

export type FieldType =
  | { t: "string" }
  | { t: "int32" }
  | { t: "bytes" }
  | { t: "fieldmask" }
  | { t: "enum"; values: readonly string[] }
  | { t: "message"; message: Message };

export interface Field {
  type: FieldType;
  repeated?: boolean;
}

/** A message: its fields by lowerCamel JSON name. */
export type Message = Readonly<Record<string, Field>>;

const STRING: Field = { type: { t: "string" } };
const STRINGS: Field = { type: { t: "string" }, repeated: true };
const message = (m: Message, repeated = false): Field => ({ type: { t: "message", message: m }, repeated });

export const LOG_TYPES = ["LOG_TYPE_UNSPECIFIED", "ADMIN_READ", "DATA_WRITE", "DATA_READ"] as const;

export const EXPR: Message = { expression: STRING, title: STRING, description: STRING, location: STRING };
export const BINDING: Message = { role: STRING, members: STRINGS, condition: message(EXPR) };
const AUDIT_LOG_CONFIG: Message = {
  logType: { type: { t: "enum", values: LOG_TYPES } },
  exemptedMembers: STRINGS,
};
const AUDIT_CONFIG: Message = { service: STRING, auditLogConfigs: message(AUDIT_LOG_CONFIG, true) };

/** google.iam.v1.Policy; `auditConfigs` only where the API version has it. */
function policyMessage(auditConfigs: boolean): Message {
  const m: Record<string, Field> = {
    version: { type: { t: "int32" } },
    bindings: message(BINDING, true),
    etag: { type: { t: "bytes" } },
  };
  if (auditConfigs) m.auditConfigs = message(AUDIT_CONFIG, true);
  return m;
}

/** google.iam.v1.SetIamPolicyRequest; `updateMask` only where the API version has it. */
export function setIamPolicyRequest(auditConfigs: boolean, updateMask: boolean): Message {
  const m: Record<string, Field> = { policy: message(policyMessage(auditConfigs)) };
  if (updateMask) m.updateMask = { type: { t: "fieldmask" } };
  return m;
}

export const GET_IAM_POLICY_REQUEST: Message = {
  options: message({ requestedPolicyVersion: { type: { t: "int32" } } }),
};
export const TEST_IAM_PERMISSIONS_REQUEST: Message = { permissions: STRINGS };

const snake = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `field` (lowerCamel) by its JSON or proto name. */
function fieldOf(m: Message, key: string): [string, Field] | undefined {
  if (Object.prototype.hasOwnProperty.call(m, key)) return [key, m[key]!];
  const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  if (camel !== key && snake(camel) === key && Object.prototype.hasOwnProperty.call(m, camel))
    return [camel, m[camel]!];
  return undefined;
}

/** "policy.bindings[0]" as Google names the place of a value in its messages (proto names). */
function at(path: string, name: string): string {
  return path === "" ? snake(name) : `${path}.${snake(name)}`;
}

const TYPE_NAMES: Record<FieldType["t"], string> = {
  string: "TYPE_STRING",
  int32: "TYPE_INT32",
  bytes: "TYPE_BYTES",
  enum: "TYPE_ENUM",
  message: "TYPE_MESSAGE",
  fieldmask: "type.googleapis.com/google.protobuf.FieldMask",
};

function badValue(path: string, f: FieldType, raw: unknown): never {
  throw invalidArgument(`Invalid value at '${path}' (${TYPE_NAMES[f.t]}), ${shown(raw)}`, path);
}

const BASE64 = /^(?:[A-Za-z0-9+/]|[A-Za-z0-9_-])*={0,2}$/;

/** The bytes of a proto3 JSON `bytes` value (either base64 alphabet, padding optional). */
export function base64Bytes(s: string): Buffer | undefined {
  if (!BASE64.test(s)) return undefined;
  const body = s.replace(/=+$/, "");
  if (body.length % 4 === 1 || (/[+/]/.test(body) && /[-_]/.test(body))) return undefined;
  if (s.length !== body.length && s.length % 4 !== 0) return undefined;
  return Buffer.from(body.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}

/** A value as an error message quotes it: a scalar as JSON, a list or an object by its kind only
 *  (a body of 200,000 nested lists has no JSON text that fits a message, or a stack). */
function shown(raw: unknown): string {
  if (Array.isArray(raw)) return "[…]";
  if (raw !== null && typeof raw === "object") return "{…}";
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function scalar(f: FieldType, raw: unknown, path: string): unknown {
  switch (f.t) {
    case "string":
    case "fieldmask":
      return typeof raw === "string" ? raw : badValue(path, f, raw);
    case "int32": {
      const n =
        typeof raw === "number" ? raw : typeof raw === "string" && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
      return Number.isInteger(n) && Math.abs(n) <= 2 ** 31 - 1 ? n : badValue(path, f, raw);
    }
    case "bytes":
      return typeof raw === "string" && base64Bytes(raw) !== undefined ? raw : badValue(path, f, raw);
    case "enum":
      if (typeof raw === "string" && f.values.includes(raw)) return raw;
      if (typeof raw === "number" && f.values[raw] !== undefined) return f.values[raw];
      return badValue(path, f, raw);
    case "message":
      return parseMessage(raw, f.message, path);
  }
}

function value(field: Field, raw: unknown, path: string): unknown {
  if (!field.repeated) return scalar(field.type, raw, path);
  if (!Array.isArray(raw)) return badValue(path, field.type, raw);
  return raw.map((v, i) =>
    v === null ? badValue(`${path}[${i}]`, field.type, v) : scalar(field.type, v, `${path}[${i}]`),
  );
}

/**
 * A JSON value as the message `m` (lowerCamel names, no nulls); throws Google's INVALID_ARGUMENT
 * for an unknown field or a value of the wrong type. `path` names the value in messages.
 */
export function parseMessage(raw: unknown, m: Message, path = ""): Record<string, unknown> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    if (path === "") throw invalidArgument("Invalid JSON payload received. The request body must be a JSON object.");
    throw invalidArgument(`Invalid value at '${path}' (TYPE_MESSAGE), ${shown(raw)}`, path);
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(raw as Record<string, unknown>)) {
    const found = fieldOf(m, key);
    if (!found) {
      const where = path === "" ? "" : ` at '${path}'`;
      throw invalidArgument(
        `Invalid JSON payload received. Unknown name "${key}"${where}: Cannot find field.`,
        path === "" ? key : `${path}.${key}`,
      );
    }
    const [name, field] = found;
    if (name in out)
      throw invalidArgument(`Invalid JSON payload received. Field "${name}" is set twice.`, at(path, name));
    if (v === null) continue;
    out[name] = value(field, v, at(path, name));
  }
  return out;
}

/** Parses a JSON request body that must be an object; an empty body is `{}`. */
export function parseJsonBody(body: Buffer | undefined): Record<string, unknown> {
  if (!body || body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (e) {
    throw invalidArgument(`Invalid JSON payload received. ${(e as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalidArgument("Invalid JSON payload received. The request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

/** Parses a JSON request body as `m`; an empty body is the empty message. */
export function parseBody(body: Buffer | undefined, m: Message): Record<string, unknown> {
  return parseMessage(parseJsonBody(body), m);
}

/** Google's system parameters (the discovery documents' top-level `parameters`), which every
 *  method takes, and the `$`-prefixed spellings Google's client libraries send. */
const SYSTEM_PARAMETERS = new Set(
  ["$.xgafv", "access_token", "alt", "callback", "fields", "key", "oauth_token", "prettyPrint", "quotaUser"]
    .concat(["upload_protocol", "uploadType"])
    .flatMap((p) => [p, `$${p}`]),
);

/** Refuses a query parameter that is neither a system parameter nor one of the method's own. */
export function checkQuery(query: URLSearchParams | undefined, own: readonly string[]): void {
  for (const name of query?.keys() ?? []) {
    if (SYSTEM_PARAMETERS.has(name) || own.includes(name)) continue;
    throw invalidArgument(
      `Invalid JSON payload received. Unknown name "${name}": Cannot bind query parameter. ` +
        `Field '${name}' could not be found in request message.`,
      name,
    );
  }
}
