// Pulumi's `X.get(name, id)`: a read-only lookup of an existing grant or policy. It declares the
// policy's read (the type's get…IamPolicy invoke, named `name`), read while the program runs as an
// output-form invoke whose arguments are known is, and gives the outputs a resource of the type
// would have, taken from the live policy; the stack manages nothing for it.
import { UserError } from "../diagnostics/diagnostic.js";
import { getEndpointIamPolicy, getRestorePlanIamPolicy } from "../drivers/get-iam-policy.js";
import { resourceDriver } from "../drivers/registry.js";
import type { Policy } from "../generated/schemas.js";
import type { PolicyKind } from "../gcp/object-kinds.js";
import { currentProgram } from "./context.js";
import { invoke } from "./invokes.js";
import { knownDeep, output, type Output } from "./output.js";

const READERS: Record<PolicyKind, { token: string; idKey: string }> = {
  restorePlan: { token: getRestorePlanIamPolicy.token, idKey: "restorePlanId" },
  endpoint: { token: getEndpointIamPolicy.token, idKey: "endpointId" },
};

/** The lookup `Type.get(name, id)` of the resource type `token`: an object whose every property
 *  is an output of the live grant (`members`, `etag`, `id`, …). */
export function lookup(
  token: string,
  name: string,
  id: unknown,
  more: { state?: unknown; opts?: object },
): Record<string, Output<unknown>> {
  const typeName = token.slice(token.lastIndexOf(":") + 1);
  const program = currentProgram(`${typeName}.get("${name}")`);
  const site = program.siteOfCaller();
  const fail = (summary: string, detail?: string) => new UserError(program.errorAt(site, summary, detail));
  const driver = resourceDriver(token)!;
  // A lookup takes no state to match and no options: given, they would be ignored, so they are refused.
  const extra = more.state !== undefined ? "state" : Object.keys(more.opts ?? {})[0];
  if (extra !== undefined) {
    const what = extra === "state" ? "a state argument" : `the option ${extra}`;
    const summary = `${typeName}.get("${name}"): converge does not support ${what} in a lookup`;
    throw fail(summary, "Give the name and the id only.");
  }
  const known = knownDeep(id);
  if (!known || typeof known.value !== "string") {
    const summary = `${typeName}.get("${name}"): the id must be a string known while the program runs`;
    throw fail(summary, `Its form is "${driver.importIdForm}".`);
  }
  const text = known.value;
  const p = program.stack.provider;
  const target = driver.parseImportId(text, { project: p.project, location: p.location });
  if (typeof target === "string") throw fail(`${typeName}.get("${name}"): ${target}`);
  const [, project, , location, , objectId] = target.name.split("/");
  const reader = READERS[driver.kind];
  const policy = invoke<Policy>(reader.token, { [reader.idKey]: objectId, location, project }, { name });
  const found = policy.apply((live) => {
    const inputs = driver.adopt(target, live);
    if (typeof inputs === "string") throw fail(`${typeName}.get("${name}", "${text}"): ${inputs}`);
    return driver.outputs(inputs, live.etag ?? "");
  });
  const fixed: Record<string, Output<unknown>> = { id: output(text), name: output(target.name) };
  const outputs = found as Record<string, Output<unknown>>;
  return new Proxy(fixed, { get: (t, key) => (typeof key === "symbol" ? undefined : (t[key] ?? outputs[key])) });
}
