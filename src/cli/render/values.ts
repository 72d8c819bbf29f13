// Values as the plan renders them, without change markers: scalars inline, lists and maps over
// several lines, each element or entry on lines of its own however deep it is nested. Used by
// `converge show` (the state) and `converge state show`. Pure.
import { splitAddress } from "../../language/addresses.js";
import { type Line, seg } from "../../diagnostics/lines.js";
import { maxOf } from "../../base/arrays.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return "null";
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** A map key as shown: bare when it is a name, quoted as a JSON string otherwise (an empty key,
 *  one with spaces, `=`, quotes…), as Terraform quotes map keys: the text reads back as the key. */
export function keyText(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key);
}

/** The width of the widest of `keys` as shown. */
export function keyPad(keys: readonly string[]): number {
  return maxOf(
    keys.map((k) => keyText(k).length),
    0,
  );
}

/** Outputs as `name = value` lines, by name, names padded: one order and one style for apply's
 *  "Outputs:", `converge output` and `converge show` (the plan's changes are in the same order). */
export function outputLines(outputs: Readonly<Record<string, unknown>>): Line[] {
  const names = Object.keys(outputs).sort();
  const pad = keyPad(names);
  return names.flatMap((k) => attributeLines(k, pad, outputs[k], ""));
}

/** One attribute `key = value`, keys padded to `pad`, nested values indented below it. */
export function attributeLines(key: string, pad: number, value: unknown, indent: string): Line[] {
  return valueLines(`${indent}${keyText(key).padEnd(pad)} = `, value, indent, "");
}

/** `value` after `head` on its first line: a scalar or an empty list or map on that line, else
 *  its elements or entries below it, each however nested, and the closing bracket then `after`. */
function valueLines(head: string, value: unknown, indent: string, after: string): Line[] {
  const inner = `${indent}    `;
  if (Array.isArray(value) && value.length) {
    return [[seg(`${head}[`)], ...value.flatMap((v) => valueLines(inner, v, inner, ",")), [seg(`${indent}]${after}`)]];
  }
  if (isObj(value) && Object.keys(value).length) {
    const keys = Object.keys(value).sort();
    const pad = keyPad(keys);
    return [
      [seg(`${head}{`)],
      ...keys.flatMap((k) => attributeLines(k, pad, value[k], inner)),
      [seg(`${indent}}${after}`)],
    ];
  }
  return [[seg(`${head}${Array.isArray(value) ? "[]" : isObj(value) ? "{}" : scalar(value)}${after}`)]];
}

/** A resource as `terraform show` prints one: a comment with its address, then its attributes. */
export function resourceLines(
  address: string,
  type: string,
  values: Obj,
  mode: "managed" | "data" = "managed",
): Line[] {
  const keys = Object.keys(values).sort();
  const pad = keyPad(keys);
  return [
    [seg(`# ${address}:`, "bold")],
    [seg(`${mode === "data" ? "data" : "resource"} "${type}" "${splitAddress(address).name}" {`)],
    ...keys.flatMap((k) => attributeLines(k, pad, values[k], "    ")),
    [seg("}")],
  ];
}
