// What IAM Conditions may name: Google's attribute groups, attributes and functions
// (https://cloud.google.com/iam/docs/conditions-attribute-reference), and CEL's operators with the
// types they take. The tables ./condition-check.ts checks an expression against.
import { T, type Type } from "./condition-types.js";

/** Attribute groups (not values): their attributes, and the functions called on them. */
export const GROUPS: Record<string, { fields: Record<string, Type>; funcs: Record<string, Type[]> }> = {
  request: { fields: { time: T.timestamp, host: T.string, path: T.string, auth: T.group("request.auth") }, funcs: {} },
  "request.auth": { fields: { access_levels: T.list(T.string) }, funcs: {} },
  resource: {
    fields: { name: T.string, type: T.string, service: T.string },
    // argument types, then the result type
    funcs: {
      matchTag: [T.string, T.string, T.bool],
      matchTagId: [T.string, T.string, T.bool],
      hasTagKey: [T.string, T.bool],
      hasTagKeyId: [T.string, T.bool],
    },
  },
  destination: { fields: { ip: T.string, port: T.int }, funcs: {} },
  api: { fields: {}, funcs: { getAttribute: [] } },
  compute: {
    fields: {},
    funcs: { isForwardingRuleCreationOperation: [T.bool], matchLoadBalancingSchemes: [T.list(T.string), T.bool] },
  },
};
export const ROOTS = ["request", "resource", "destination", "api", "compute"];

/** Google's documented API attributes and the type of their values. */
export const API_ATTRIBUTES: Record<string, Type> = {
  "iam.googleapis.com/modifiedGrantsByRole": T.list(T.string),
  "storage.googleapis.com/objectListPrefix": T.string,
  "aiplatform.googleapis.com/memoryScope": T.map(T.string, T.string),
  "aiplatform.googleapis.com/sessionUserId": T.string,
};

export const TIME_PARTS = [
  "getDate",
  "getDayOfMonth",
  "getDayOfWeek",
  "getDayOfYear",
  "getFullYear",
  "getHours",
  "getMilliseconds",
  "getMinutes",
  "getMonth",
  "getSeconds",
];
/** Functions called on a value, by the value's type. */
export const METHODS: Record<string, Record<string, Type[]>> = {
  string: {
    startsWith: [T.string, T.bool],
    endsWith: [T.string, T.bool],
    extract: [T.string, T.string],
    matches: [T.string, T.bool],
  },
  timestamp: Object.fromEntries(TIME_PARTS.map((f) => [f, [T.int]])),
  list: { hasOnly: [T.list(T.dyn), T.bool] },
};
export const GLOBALS: Record<string, Type[]> = {
  timestamp: [T.string, T.timestamp],
  date: [T.string, T.timestamp],
  duration: [T.string, T.duration],
};

export const ARITH: Record<string, [string, string, string][]> = {
  "+": [
    ["int", "int", "int"],
    ["uint", "uint", "uint"],
    ["double", "double", "double"],
    ["timestamp", "duration", "timestamp"],
    ["duration", "timestamp", "timestamp"],
    ["duration", "duration", "duration"],
    ["string", "string", "string"],
  ],
  "-": [
    ["int", "int", "int"],
    ["uint", "uint", "uint"],
    ["double", "double", "double"],
    ["timestamp", "duration", "timestamp"],
    ["timestamp", "timestamp", "duration"],
    ["duration", "duration", "duration"],
  ],
  "*": [
    ["int", "int", "int"],
    ["uint", "uint", "uint"],
    ["double", "double", "double"],
  ],
  "/": [
    ["int", "int", "int"],
    ["uint", "uint", "uint"],
    ["double", "double", "double"],
  ],
  "%": [
    ["int", "int", "int"],
    ["uint", "uint", "uint"],
  ],
};
/** CEL's operator functions, by the operator they stand for. */
export const OPERATORS: Record<string, string> = {
  "_&&_": "&&",
  "_||_": "||",
  "!_": "!",
  "-_": "-",
  "_==_": "==",
  "_!=_": "!=",
  "_<_": "<",
  "_<=_": "<=",
  "_>_": ">",
  "_>=_": ">=",
  "_+_": "+",
  "_-_": "-",
  "_*_": "*",
  "_/_": "/",
  "_%_": "%",
  "_[_]": "[]",
  "_?_:_": "?:",
  "@in": "in",
};
export const ORDERED = new Set(["int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"]);

/** `rec[key]` for an own key only (names come from the expression: "constructor" is not a group). */
export const own = <V>(rec: Record<string, V>, key: string): V | undefined =>
  Object.hasOwn(rec, key) ? rec[key] : undefined;
