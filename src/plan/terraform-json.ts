// Terraform's plan JSON (schemas/terraform-plan.schema.json) from a converge Plan: what
// `plan --json` and `show --json PLANFILE` print, so that tools built for Terraform's format
// (hashicorp/terraform-json, OPA/conftest, checkov, infracost…) read converge's plans as they
// read Terraform's. Pure: the Plan alone (a saved plan prints as the plan that made it did).
// Saved plans keep converge's own format; converge's data Terraform has no place for goes under
// the one `converge` member.
import { splitAddress } from "../language/addresses.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type {
  Change,
  ConvergeChangeExtras,
  Plan,
  ResourceChange,
  TerraformPlan,
  TerraformPlanFailure,
  TfChange,
  TfCtyType,
  TfResourceChange,
  TfState,
  TfStateOutput,
  TfStateResource,
  TfStateValues,
} from "../generated/schemas.js";
import { TOOL_VERSION } from "../base/version.js";
import { terraformActions } from "../contracts/actions.js";
import { configurationOf, PROVIDER_NAME, relevantAttributes } from "./terraform-config.js";

const TERRAFORM_PLAN_FORMAT = "1.2";
const TERRAFORM_STATE_FORMAT = "1.0";

/** cty's JSON serialisation of the type Terraform infers for a JSON value. */
export function ctyType(value: unknown): TfCtyType {
  if (value === null || value === undefined) return "dynamic";
  if (typeof value === "string") return "string";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "bool";
  if (Array.isArray(value)) return ["tuple", value.map(ctyType)];
  return ["object", Object.fromEntries(Object.entries(value).map(([k, v]) => [k, ctyType(v)]))];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function tfChange(c: Change): TfChange {
  return {
    actions: terraformActions(c.action),
    before: c.before,
    after: c.after,
    after_unknown: c.after_unknown,
    before_sensitive: c.before_sensitive ?? false,
    after_sensitive: c.after_sensitive ?? false,
    ...(c.replace_paths ? { replace_paths: c.replace_paths } : {}),
    ...(c.importing ? { importing: { id: c.importing.id } } : {}),
  };
}

function tfResourceChange(c: ResourceChange): TfResourceChange {
  const reason = c.action_reason === "create_because_gone" ? undefined : c.action_reason;
  return {
    ...resourceIdentity(c),
    change: tfChange(c.change),
    ...(c.previous_address ? { previous_address: c.previous_address } : {}),
    ...(reason ? { action_reason: reason } : {}),
  };
}

/** converge's data about a change: what Terraform's ResourceChange has no member for. */
function changeExtras(c: ResourceChange): ConvergeChangeExtras {
  return {
    address: c.address,
    ...(c.policy ? { policy: c.policy } : {}),
    ...(c.dependencies ? { dependencies: c.dependencies } : {}),
    ...(c.protect ? { protect: true } : {}),
    ...(c.before_adopted ? { before_adopted: true } : {}),
    ...(c.after_adopted ? { after_adopted: true } : {}),
    ...(c.after_taken_over ? { after_taken_over: c.after_taken_over } : {}),
    ...(c.state_only ? { state_only: c.state_only } : {}),
    ...(c.action_reason === "create_because_gone" ? { action_reason: c.action_reason } : {}),
  };
}

/** What names a resource in Terraform's JSON, in a change and in the state alike. */
function resourceIdentity(r: { address: string; mode: "managed" | "data"; type: string }) {
  return { address: r.address, mode: r.mode, type: r.type, ...nameAndIndex(r.address), provider_name: PROVIDER_NAME };
}

/** Terraform's name and index of an address: `viewers["sre"]` is viewers, index "sre". */
function nameAndIndex(address: string): { name: string; index?: string | number } {
  const { name, index } = splitAddress(address);
  return index === undefined ? { name } : { name, index };
}

function stateResource(r: {
  address: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  values: unknown;
  depends_on?: string[] | undefined;
}): TfStateResource {
  return {
    ...resourceIdentity(r),
    schema_version: 0,
    values: isObject(r.values) ? r.values : {},
    sensitive_values: {},
    ...(r.depends_on?.length ? { depends_on: r.depends_on } : {}),
  };
}

const byAddress = (a: TfStateResource, b: TfStateResource) =>
  a.address < b.address ? -1 : a.address > b.address ? 1 : a.mode < b.mode ? -1 : a.mode > b.mode ? 1 : 0;

function stateOutput(value: unknown): TfStateOutput {
  return { sensitive: false, value, type: ctyType(value) };
}

/** What the plan expects once applied: every resource but the deleted, with the values known
 *  now (the others null), and the outputs (values known only after apply left out). */
function plannedValues(plan: Plan): TfStateValues {
  const resources = plan.resource_changes
    .filter((c) => c.change.action !== "delete")
    .map((c) => stateResource({ address: c.address, mode: c.mode, type: c.type, name: c.name, values: c.change.after }))
    .sort(byAddress);
  const outputs: Record<string, TfStateOutput> = Object.create(null);
  for (const [name, oc] of Object.entries(plan.output_changes)) {
    if (oc.action === "delete") continue;
    outputs[name] = oc.after_unknown === false ? stateOutput(oc.after) : { sensitive: false };
  }
  return { outputs, root_module: { resources } };
}

/** The state the plan was made from, as refresh left it, and the data sources read while
 *  planning (Terraform keeps those in its refreshed state); absent when there is neither. */
function priorState(plan: Plan): TfState | undefined {
  const reads = (plan.configuration?.variables ?? []).filter(
    (v) => v.function !== undefined && Object.hasOwn(plan.variables ?? {}, v.name),
  );
  if (!plan.prior_state.resources && !reads.length) return undefined;
  const managed = (plan.prior_state.resources ?? []).map((r) =>
    stateResource({
      address: r.address,
      mode: "managed",
      type: r.type,
      name: r.address,
      values: r.values,
      depends_on: r.dependencies,
    }),
  );
  const data = reads.map((v) =>
    stateResource({ address: v.name, mode: "data", type: v.function!, name: v.name, values: plan.variables![v.name] }),
  );
  const outputs: Record<string, TfStateOutput> = Object.create(null);
  for (const [name, value] of Object.entries(plan.prior_state.outputs ?? {})) outputs[name] = stateOutput(value);
  return {
    format_version: TERRAFORM_STATE_FORMAT,
    terraform_version: TOOL_VERSION,
    values: { outputs, root_module: { resources: [...managed, ...data].sort(byAddress) } },
  };
}

/** Terraform's plan JSON of a converge plan. */
export function toTerraformPlanJson(plan: Plan): TerraformPlan {
  const variables: TerraformPlan["variables"] = Object.create(null);
  for (const [name, value] of Object.entries(plan.variables ?? {})) variables[name] = { value };
  const prior = priorState(plan);
  return {
    format_version: TERRAFORM_PLAN_FORMAT,
    terraform_version: TOOL_VERSION,
    variables,
    planned_values: plannedValues(plan),
    resource_drift: plan.resource_drift.map(tfResourceChange),
    resource_changes: plan.resource_changes.map(tfResourceChange),
    output_changes: Object.fromEntries(Object.entries(plan.output_changes).map(([k, c]) => [k, tfChange(c)])),
    ...(prior ? { prior_state: prior } : {}),
    configuration: configurationOf(plan),
    relevant_attributes: relevantAttributes(plan),
    timestamp: plan.timestamp,
    applyable: plan.applyable,
    complete: !plan.errored && plan.options.targets.length === 0,
    errored: plan.errored,
    converge: {
      provider_schema_version: plan.provider_schema_version ?? "",
      stack: plan.stack,
      ...(plan.target !== undefined ? { target: plan.target } : {}),
      prior_state: { lineage: plan.prior_state.lineage, serial: plan.prior_state.serial },
      provider: plan.provider,
      options: plan.options,
      policies: plan.policies,
      diagnostics: plan.diagnostics,
      ...(plan.access_changes ? { access_changes: plan.access_changes } : {}),
      ...(plan.guardrails ? { guardrails: plan.guardrails } : {}),
      resource_changes: plan.resource_changes.map(changeExtras),
      ...(plan.digest ? { digest: plan.digest } : {}),
      ...(plan.signature ? { signature: plan.signature } : {}),
    },
  };
}

/** What `plan --json` prints when it has no plan: an errored plan holding only the diagnostics. */
export function terraformPlanFailure(diagnostics: Diagnostic[]): TerraformPlanFailure {
  return {
    format_version: TERRAFORM_PLAN_FORMAT,
    terraform_version: TOOL_VERSION,
    applyable: false,
    complete: false,
    errored: true,
    converge: { diagnostics },
  };
}
