// `pulumi stack export` (a deployment of version 3: {version, deployment: {manifest,
// secrets_providers, resources, pending_operations}}) and the stack checkpoint a file backend
// keeps ({version, checkpoint: {stack, latest: deployment}}), read into the resources to adopt.
// Pulumi's own resources (the stack, its providers) hold no cloud object and are left out; a
// secret value (Pulumi's secret signature, with its ciphertext, or its plaintext after
// --show-secrets) becomes a SecretValue, its clear text dropped here.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { warning } from "../diagnostics/diagnostic.js";
import type { DocPath } from "../yaml/source.js";
import { objectOf, refuse, type SourceFile } from "./file.js";
import { SecretValue, typeOfValue, type SourceResource } from "./model.js";

/** The key and value Pulumi marks a secret with (its "special signature" for secrets). */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

const EXPORT = "a `pulumi stack export` file";

/** `v` with each secret replaced by a SecretValue (typed by its plaintext when the export has it). */
function withSecrets(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withSecrets);
  const o = objectOf(v);
  if (!o) return v;
  if (o[SECRET_SIG_KEY] === SECRET_SIG) {
    if (typeof o.plaintext !== "string") return new SecretValue();
    try {
      return new SecretValue(typeOfValue(JSON.parse(o.plaintext)));
    } catch {
      return new SecretValue("string");
    }
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, withSecrets(x)]));
}

/** The deployment inside an export or a checkpoint, and where it is; refused when it is neither. */
function deploymentOf(file: SourceFile): { deployment: Record<string, unknown>; at: DocPath } {
  const { src, root } = file;
  const top = objectOf(root);
  if (!top) throw refuse(src, [], `${src.file} is not ${EXPORT}: it is not a JSON object`);
  if (!("version" in top)) {
    throw refuse(
      src,
      [],
      `${src.file} is not ${EXPORT}: it has no "version"`,
      "Write the file with `pulumi stack export --file FILE`.",
    );
  }
  if (top.version !== 3) {
    throw refuse(
      src,
      ["version"],
      `${src.file}: deployment version ${JSON.stringify(top.version)} is not supported`,
      "converge reads version 3, what `pulumi stack export` of Pulumi 3 writes.",
    );
  }
  const latest = objectOf(objectOf(top.checkpoint)?.latest);
  if (latest) return { deployment: latest, at: ["checkpoint", "latest"] };
  const deployment = objectOf(top.deployment);
  if (!deployment)
    throw refuse(
      src,
      "deployment" in top ? ["deployment"] : [],
      `${src.file} is not ${EXPORT}: it has no "deployment" object`,
    );
  return { deployment, at: ["deployment"] };
}

/** A URN's last part: the name the program gave the resource. */
const nameOfUrn = (urn: string): string => urn.slice(urn.lastIndexOf("::") + 2) || urn;

/** Whether a type is Pulumi's own: the stack, or a provider instance. */
const isPulumiOwn = (type: string): boolean => type === "pulumi:pulumi:Stack" || type.startsWith("pulumi:providers:");

/** Where a provider resource puts what it manages: its project and region (google-native's
 *  defaults), by the reference resources give it ("{urn}::{id}"). */
type ProviderDefaults = Map<string, Record<string, string>>;

function providerDefaults(list: unknown[]): ProviderDefaults {
  const out: ProviderDefaults = new Map();
  for (const r of list) {
    const o = objectOf(r);
    if (typeof o?.type !== "string" || !o.type.startsWith("pulumi:providers:")) continue;
    const p = { ...objectOf(o.outputs), ...objectOf(o.inputs) };
    const d: Record<string, string> = {};
    if (typeof p.project === "string") d.project = p.project;
    const location = p.region ?? p.location;
    if (typeof location === "string") d.location = location;
    out.set(`${String(o.urn)}::${String(o.id)}`, d);
  }
  return out;
}

function resourceOf(
  file: SourceFile,
  r: Record<string, unknown>,
  path: DocPath,
  providers: ProviderDefaults,
): SourceResource {
  const { src } = file;
  if (typeof r.urn !== "string" || typeof r.type !== "string")
    throw refuse(src, path, `${src.file}: a resource without a "urn" and a "type"`);
  const inputs = objectOf(r.inputs) ?? {};
  const outputs = objectOf(r.outputs) ?? {};
  // Inputs are what the program declared; an output fills what they lack (an id, a project), and
  // the provider's project and region complete a short name.
  const defaults = (typeof r.provider === "string" ? providers.get(r.provider) : undefined) ?? {};
  const properties = withSecrets({ ...defaults, ...outputs, ...inputs }) as Record<string, unknown>;
  const res: SourceResource = { address: r.urn, type: r.type, name: nameOfUrn(r.urn), properties, path };
  if (r.delete === true) res.skip = "Pulumi marked it for deletion (a replacement it did not finish)";
  else if (r.custom === false)
    res.skip = "a component resource: it holds no cloud object of its own (its children are migrated)";
  return res;
}

/** The resources of a Pulumi export to adopt, and warnings about the export itself. */
export function readPulumiExport(file: SourceFile): { resources: SourceResource[]; notes: Diagnostic[] } {
  const { src } = file;
  const { deployment, at } = deploymentOf(file);
  const list = deployment.resources ?? [];
  if (!Array.isArray(list)) throw refuse(src, [...at, "resources"], `${src.file}: "resources" is not a list`);
  const resources: SourceResource[] = [];
  const providers = providerDefaults(list);
  list.forEach((r, i) => {
    const path = [...at, "resources", i];
    const o = objectOf(r);
    if (!o) throw refuse(src, path, `${src.file}: a resource is not an object`);
    if (typeof o.type === "string" && isPulumiOwn(o.type)) return;
    resources.push(resourceOf(file, o, path, providers));
  });
  const pending = deployment.pending_operations;
  const notes =
    Array.isArray(pending) && pending.length > 0
      ? [pendingNote(file, [...at, "pending_operations"], pending.length)]
      : [];
  return { resources, notes };
}

function pendingNote(file: SourceFile, path: DocPath, n: number): Diagnostic {
  const pos = file.src.position(path);
  return warning(
    `${file.src.file} has ${n} pending operation${n === 1 ? "" : "s"}: ` +
      "Pulumi was interrupted, and the cloud may differ from the export",
    {
      file: file.src.file,
      line: pos.line,
      column: pos.column,
      detail: "Run `pulumi refresh` and export again, or review the first plan closely.",
    },
  );
}
