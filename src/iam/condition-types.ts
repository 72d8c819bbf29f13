// The CEL types an IAM condition checker works with, and the checks of literal arguments that
// Google documents a format for (timestamps, dates, durations, time zones, extract() templates,
// tag identifiers).

export type Scalar =
  "bool" | "int" | "uint" | "double" | "string" | "bytes" | "null" | "timestamp" | "duration" | "dyn";
export type Type =
  | { k: Scalar }
  | { k: "list"; of: Type }
  | { k: "map"; key: Type; of: Type }
  /** An attribute group such as `request` or `request.auth`: not a value, only its fields and functions are. */
  | { k: "group"; path: string };

const scalar = (k: Scalar): Type => ({ k });

export const T = {
  bool: scalar("bool"),
  int: scalar("int"),
  uint: scalar("uint"),
  double: scalar("double"),
  string: scalar("string"),
  bytes: scalar("bytes"),
  null: scalar("null"),
  timestamp: scalar("timestamp"),
  duration: scalar("duration"),
  dyn: scalar("dyn"),
  scalar: (k: string): Type => scalar(k as Scalar),
  list: (of: Type): Type => ({ k: "list", of }),
  map: (key: Type, of: Type): Type => ({ k: "map", key, of }),
  group: (path: string): Type => ({ k: "group", path }),
  /** The type of a literal, by the parser's constant kind. */
  constant(kind: string | undefined): Type {
    const map: Record<string, Scalar> = {
      boolValue: "bool",
      int64Value: "int",
      uint64Value: "uint",
      doubleValue: "double",
      stringValue: "string",
      bytesValue: "bytes",
      nullValue: "null",
      timestampValue: "timestamp",
      durationValue: "duration",
    };
    return scalar(kind && Object.hasOwn(map, kind) ? map[kind]! : "dyn");
  },
};

export const isList = (t: Type): t is { k: "list"; of: Type } => t.k === "list";
export const isMap = (t: Type): t is { k: "map"; key: Type; of: Type } => t.k === "map";

export function typeName(t: Type): string {
  switch (t.k) {
    case "list":
      return `list(${typeName(t.of)})`;
    case "map":
      return `map(${typeName(t.key)}, ${typeName(t.of)})`;
    case "group":
      return `"${t.path}"`;
    default:
      return t.k;
  }
}

/** Whether a value of type `given` may be used where `want` is expected (dyn goes both ways). */
export function assignable(want: Type, given: Type): boolean {
  if (want.k === "dyn" || given.k === "dyn") return given.k !== "group" && want.k !== "group";
  if (isList(want)) return isList(given) && assignable(want.of, given.of);
  if (isMap(want)) return isMap(given) && assignable(want.key, given.key) && assignable(want.of, given.of);
  if (want.k === "group" || given.k === "group") return false;
  return want.k === given.k;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const DURATION = /^-?(\d+(\.\d+)?(h|m|s|ms|us|µs|ns))+$/;
const OFFSET_ZONE = /^[+-]\d{2}:\d{2}$/;
const EXTRACT_ID = /\{[A-Za-z0-9_]+\}/g;

/** Whether year-month-day is a real calendar day. */
function realDay(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

function timestampProblem(v: string): string | undefined {
  const m = RFC3339.exec(v);
  const ok =
    m &&
    realDay(Number(m[1]), Number(m[2]), Number(m[3])) &&
    Number(m[4]) < 24 &&
    Number(m[5]) < 60 &&
    Number(m[6]) < 61;
  return ok ? undefined : `"${v}" is not an RFC 3339 timestamp (e.g. "2027-01-01T00:00:00Z")`;
}

function timeZoneProblem(v: string): string | undefined {
  if (OFFSET_ZONE.test(v)) return undefined;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: v });
    return undefined;
  } catch {
    return `"${v}" is not a time zone (an IANA name such as "Europe/Berlin", or an offset such as "+01:00")`;
  }
}

const TAG_IDS: Record<string, string[]> = {
  "resource.hasTagKeyId": ["tagKeys/"],
  "resource.matchTagId": ["tagKeys/", "tagValues/"],
};

/** The problem with string literal `v` given as argument `index` of `fn`, if its format is wrong. */
export function checkLiteral(fn: string, index: number, v: string): string | undefined {
  switch (fn) {
    case "timestamp":
      return timestampProblem(v);
    case "date": {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
      return m && realDay(Number(m[1]), Number(m[2]), Number(m[3])) ? undefined : `"${v}" is not a date (YYYY-MM-DD)`;
    }
    case "duration":
      return DURATION.test(v) ? undefined : `"${v}" is not a duration (seconds followed by s, e.g. "3600s")`;
    case "extract":
      return (v.match(EXTRACT_ID) ?? []).length === 1 && !/[{}]/.test(v.replace(EXTRACT_ID, ""))
        ? undefined
        : `"${v}" is not an extraction template: it needs exactly one {name} ` +
            `(letters, digits, _), e.g. "projects/{project}/"`;
    case "resource.hasTagKey":
    case "resource.matchTag":
      return index === 0 && !/^[^/]+\/[^/]+$/.test(v)
        ? `"${v}" is not a namespaced tag key (e.g. "123456789012/env")`
        : undefined;
    default: {
      if (/^get[A-Z]/.test(fn)) return timeZoneProblem(v);
      const prefix = Object.hasOwn(TAG_IDS, fn) ? TAG_IDS[fn]![index] : undefined;
      return prefix && !(v.startsWith(prefix) && v.length > prefix.length)
        ? `"${v}" is not a permanent tag ID (${prefix}…)`
        : undefined;
    }
  }
}
