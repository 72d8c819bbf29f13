// A Terraform state: the state file itself (format version 4: `terraform state pull`, or a
// terraform.tfstate) or `terraform show -json` of it (format_version 1.x: values.root_module with
// its child_modules), read into the resources to adopt. Sensitive attributes (state v4's
// sensitive_attributes, show -json's sensitive_values) become SecretValues.
import type { DocPath } from "../yaml/source.js";
import { objectOf, refuse, type SourceFile } from "./file.js";
import { SecretValue, typeOfValue, type SourceResource } from "./model.js";

const STATE = "a Terraform state (format version 4) or `terraform show -json` output";

/** `value` with what `mask` marks true (show -json's sensitive_values shape) made a SecretValue. */
export function markSensitive(value: unknown, mask: unknown): unknown {
  if (mask === true) return new SecretValue(typeOfValue(value));
  if (Array.isArray(value) && Array.isArray(mask)) return value.map((v, i) => markSensitive(v, mask[i]));
  const o = objectOf(value);
  const m = objectOf(mask);
  if (!o || !m) return value;
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, markSensitive(v, m[k])]));
}

/** State v4's sensitive_attributes (paths of get_attr and index steps) as a sensitive_values mask. */
function maskOfPaths(paths: unknown): Record<string, unknown> {
  const mask: Record<string, unknown> = {};
  for (const p of Array.isArray(paths) ? paths : []) {
    const steps = (Array.isArray(p) ? p : []).map((s) => {
      const o = objectOf(s);
      return o?.type === "index" ? objectOf(o.value)?.value : o?.value;
    });
    if (steps.length === 0 || steps.some((s) => typeof s !== "string" && typeof s !== "number")) continue;
    let at: Record<string, unknown> = mask;
    steps.forEach((s, i) => {
      const key = String(s);
      if (i === steps.length - 1) at[key] = true;
      else if (at[key] !== true) at = (at[key] = objectOf(at[key]) ?? {}) as Record<string, unknown>;
    });
  }
  return mask;
}

/** An index key as Terraform writes it in an address: [0] or ["dev"]. */
const indexText = (k: unknown): string => (k === undefined || k === null ? "" : `[${JSON.stringify(k)}]`);
const nameOf = (name: string, k: unknown): string => (k === undefined || k === null ? name : `${name}_${String(k)}`);

function fromStateV4(file: SourceFile, root: Record<string, unknown>): SourceResource[] {
  const { src } = file;
  const list = root.resources ?? [];
  if (!Array.isArray(list)) throw refuse(src, ["resources"], `${src.file}: "resources" is not a list`);
  const out: SourceResource[] = [];
  list.forEach((r, i) => {
    const o = objectOf(r);
    if (!o || typeof o.type !== "string" || typeof o.name !== "string")
      throw refuse(src, ["resources", i], `${src.file}: a resource without a "type" and a "name"`);
    const module = typeof o.module === "string" ? `${o.module}.` : "";
    const base = `${module}${o.mode === "data" ? "data." : ""}${o.type}.${o.name}`;
    const instances = Array.isArray(o.instances) ? o.instances : [];
    instances.forEach((inst, j) => {
      const x = objectOf(inst) ?? {};
      const properties = markSensitive(objectOf(x.attributes) ?? {}, maskOfPaths(x.sensitive_attributes)) as Record<
        string,
        unknown
      >;
      const res: SourceResource = {
        address: `${base}${indexText(x.index_key)}`,
        type: o.type as string,
        name: nameOf(o.name as string, x.index_key),
        properties,
        path: ["resources", i, "instances", j],
      };
      const skip =
        o.mode === "data"
          ? "a data source: Terraform reads it, it manages nothing"
          : x.status === "tainted"
            ? "tainted: Terraform would replace it"
            : x.deposed !== undefined
              ? "a deposed object Terraform did not finish destroying"
              : undefined;
      if (skip) res.skip = skip;
      out.push(res);
    });
  });
  return out;
}

function fromModule(file: SourceFile, mod: Record<string, unknown>, at: DocPath, out: SourceResource[]): void {
  const list = Array.isArray(mod.resources) ? mod.resources : [];
  list.forEach((r, i) => {
    const o = objectOf(r);
    const path = [...at, "resources", i];
    if (!o || typeof o.type !== "string" || typeof o.name !== "string" || typeof o.address !== "string")
      throw refuse(file.src, path, `${file.src.file}: a resource without an "address", a "type" and a "name"`);
    const properties = markSensitive(objectOf(o.values) ?? {}, o.sensitive_values) as Record<string, unknown>;
    const res: SourceResource = { address: o.address, type: o.type, name: nameOf(o.name, o.index), properties, path };
    if (o.mode === "data") res.skip = "a data source: Terraform reads it, it manages nothing";
    out.push(res);
  });
  const children = Array.isArray(mod.child_modules) ? mod.child_modules : [];
  children.forEach((c, i) => fromModule(file, objectOf(c) ?? {}, [...at, "child_modules", i], out));
}

function fromShowJson(file: SourceFile, root: Record<string, unknown>): SourceResource[] {
  const { src } = file;
  const v = root.format_version;
  if (typeof v !== "string" || !/^1\.\d+$/.test(v)) {
    throw refuse(
      src,
      ["format_version"],
      `${src.file}: JSON output format_version ${JSON.stringify(v)} is not supported`,
      "converge reads format 1.x, what `terraform show -json` of Terraform 1 writes.",
    );
  }
  if ("planned_values" in root || "resource_changes" in root) {
    throw refuse(
      src,
      [],
      `${src.file} is the JSON of a plan, not of a state`,
      "Give `terraform show -json` without a plan file: it shows the state.",
    );
  }
  const out: SourceResource[] = [];
  const values = objectOf(root.values);
  const mod = objectOf(values?.root_module);
  if (mod) fromModule(file, mod, ["values", "root_module"], out);
  return out;
}

/** The resources of a Terraform state or of its `terraform show -json`. */
export function readTerraformState(file: SourceFile): SourceResource[] {
  const { src } = file;
  const root = objectOf(file.root);
  if (!root) throw refuse(src, [], `${src.file} is not ${STATE}: it is not a JSON object`);
  if ("format_version" in root) return fromShowJson(file, root);
  if (!("version" in root))
    throw refuse(
      src,
      [],
      `${src.file} is not ${STATE}: it has no "version"`,
      "Write the state with `terraform state pull > FILE`, or `terraform show -json > FILE`.",
    );
  if (root.version !== 4) {
    throw refuse(
      src,
      ["version"],
      `${src.file}: state format version ${JSON.stringify(root.version)} is not supported`,
      "converge reads version 4, what Terraform 0.12 and later write; " +
        "run terraform once with a newer Terraform to upgrade the state.",
    );
  }
  return fromStateV4(file, root);
}
