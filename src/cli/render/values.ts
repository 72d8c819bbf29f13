// Values as the plan renders them, without change markers: scalars inline, lists and maps over
// several lines. Used by `converge show` (the state) and `converge state show`. Pure.
import { type Line, seg } from "./lines.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return "null";
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** One attribute `key = value`, keys padded to `pad`, nested values indented below it. */
export function attributeLines(key: string, pad: number, value: unknown, indent: string): Line[] {
  const name = key.padEnd(pad);
  if (Array.isArray(value)) {
    if (!value.length) return [[seg(`${indent}${name} = []`)]];
    const items = value.flatMap((v): Line[] => (isObj(v) || Array.isArray(v) ? blockLines(v, `${indent}    `, ",") : [[seg(`${indent}    ${scalar(v)},`)]]));
    return [[seg(`${indent}${name} = [`)], ...items, [seg(`${indent}]`)]];
  }
  if (isObj(value)) return [[seg(`${indent}${name} = {`)], ...objectLines(value, `${indent}    `), [seg(`${indent}}`)]];
  return [[seg(`${indent}${name} = ${scalar(value)}`)]];
}

function objectLines(o: Obj, indent: string): Line[] {
  const keys = Object.keys(o).sort();
  const pad = Math.max(0, ...keys.map((k) => k.length));
  return keys.flatMap((k) => attributeLines(k, pad, o[k], indent));
}

function blockLines(v: Obj | unknown[], indent: string, after: string): Line[] {
  if (Array.isArray(v)) return [[seg(`${indent}[`)], ...v.map((x): Line => [seg(`${indent}    ${scalar(x)},`)]), [seg(`${indent}]${after}`)]];
  return [[seg(`${indent}{`)], ...objectLines(v, `${indent}    `), [seg(`${indent}}${after}`)]];
}

/** A resource as `terraform show` prints one: a comment with its address, then its attributes. */
export function resourceLines(address: string, type: string, values: Obj, mode: "managed" | "data" = "managed"): Line[] {
  return [[seg(`# ${address}:`, "bold")], [seg(`${mode === "data" ? "data" : "resource"} "${type}" "${address}" {`)], ...objectLines(values, "    "), [seg("}")]];
}
