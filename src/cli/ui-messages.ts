// The messages of Terraform's machine-readable UI (schemas/events.schema.json) that describe a
// plan and the end of an apply: pure functions from converge's data to message bodies (without
// the @-envelope, which ui-stream.ts adds with the time).
import type { ApplyResult } from "../apply/executor.js";
import type { ChangeCounts } from "../engine/tally.js";
import type { Plan, ResourceChange, TfDiagnostic, UiChangeAction, UiEvent, UiResource } from "../generated/schemas.js";
import { displayAction, planCounts } from "../contracts/actions.js";
import { ctyType } from "../plan/terraform-json.js";
import { PROVIDER_KEY } from "../plan/terraform-config.js";

/** A message without its envelope: what each type carries, and its @message and @level. */
export type UiBody = {
  [K in UiEvent as K["type"]]: Omit<K, "@level" | "@message" | "@module" | "@timestamp"> & {
    message: string;
    level?: UiEvent["@level"];
  };
}[UiEvent["type"]];

export function uiResource(address: string, type: string): UiResource {
  return {
    addr: address,
    module: "",
    resource: address,
    implied_provider: PROVIDER_KEY,
    resource_type: type,
    resource_name: address,
    resource_key: null,
  };
}

/** The action a change stands for in the UI (Terraform's words: noop, replace, import…). */
function uiAction(c: ResourceChange): UiChangeAction {
  const a = displayAction(c);
  return a === "no-op" ? "noop" : a === "import-update" ? "update" : a;
}

const REASONS = {
  replace_because_cannot_update: "cannot_update",
  replace_by_request: "requested",
  delete_because_no_resource_config: "delete_because_no_resource_config",
  read_because_dependency_pending: "read_because_dependency_pending",
} as const;

export function diagnosticBody(d: TfDiagnostic): UiBody {
  const where = d.range ? `${d.range.filename}:${d.range.start.line}:${d.range.start.column}: ` : "";
  return {
    type: "diagnostic",
    diagnostic: d,
    level: d.severity === "error" ? "error" : "warn",
    message: `${where}${d.severity === "error" ? "Error" : "Warning"}: ${d.summary}`,
  };
}

/** After a plan: drift, each change (not the no-ops, but the imports), the counts, the access
 *  summary and the outputs' actions. */
export function planBodies(plan: Plan, retries: Record<string, number>): UiBody[] {
  const out: UiBody[] = [];
  for (const d of plan.resource_drift) {
    const action = d.change.action === "delete" ? "delete" : "update";
    out.push({
      type: "resource_drift",
      change: { resource: uiResource(d.address, d.type), action },
      message: `${d.address}: Drift detected (${action})`,
    });
  }
  for (const c of plan.resource_changes) {
    const action = uiAction(c);
    if (action === "noop" && !c.change.importing) continue;
    const reason = c.action_reason && c.action_reason !== "create_because_gone" ? REASONS[c.action_reason] : undefined;
    const shown = action === "noop" ? "import" : action;
    out.push({
      type: "planned_change",
      change: {
        resource: uiResource(c.address, c.type),
        action: shown,
        ...(reason ? { reason } : {}),
        ...(c.change.importing ? { importing: { id: c.change.importing.id } } : {}),
      },
      message: `${c.address}: Plan to ${shown}`,
    });
  }
  const n = planCounts(plan);
  out.push(retrySummary("plan", retries));
  out.push({
    type: "change_summary",
    changes: { add: n.add, change: n.change, import: n.import, remove: n.destroy, operation: "plan" },
    message: `Plan: ${n.import} to import, ${n.add} to add, ${n.change} to change, ${n.destroy} to destroy.`,
  });
  const changes = plan.access_changes?.changes ?? [];
  const granted = changes.filter((c) => c.action === "grant").length;
  const lookalikes = plan.access_changes?.lookalikes;
  const incomplete = plan.access_changes?.incomplete ?? [];
  const access = { granted, revoked: changes.length - granted, changes, incomplete };
  out.push({
    type: "access_summary",
    access: { ...access, ...(lookalikes?.length ? { lookalikes } : {}) },
    message: `Access: ${granted} granted, ${changes.length - granted} revoked`,
  });
  const outputs = Object.entries(plan.output_changes);
  if (outputs.length) {
    const actions = Object.fromEntries(
      outputs.map(([k, c]) => [
        k,
        {
          sensitive: c.after_sensitive === true,
          action:
            c.action === "no-op"
              ? ("noop" as const)
              : c.action === "create"
                ? ("create" as const)
                : c.action === "delete"
                  ? ("delete" as const)
                  : ("update" as const),
        },
      ]),
    );
    out.push({ type: "outputs", outputs: actions, message: `Outputs: ${outputs.length}` });
  }
  return out;
}

function retrySummary(operation: "plan" | "apply" | "destroy", causes: Record<string, number>): UiBody {
  const total = Object.values(causes).reduce((a, b) => a + b, 0);
  return {
    type: "retry_summary",
    retries: { operation, total, causes },
    message: total
      ? `Retried ${total} ${total === 1 ? "time" : "times"} while ${operation === "plan" ? "planning" : "applying"}`
      : `No retry while ${operation === "plan" ? "planning" : "applying"}`,
  };
}

/** After an apply: how it ended, the retries, the counts, and (when it succeeded) the outputs. */
export function appliedBodies(
  result: ApplyResult,
  c: ChangeCounts,
  destroy: boolean,
  retries: Record<string, number>,
): UiBody[] {
  const status = result.interrupted ? "interrupted" : result.failed.length ? "failed" : "complete";
  const operation = destroy ? "destroy" : "apply";
  const resources =
    destroy && status === "complete"
      ? `${c.destroyed} destroyed.`
      : `${c.imported ? `${c.imported} imported, ` : ""}${c.added} added, ` +
        `${c.changed} changed, ${c.destroyed} destroyed.`;
  const head =
    status === "complete"
      ? `${destroy ? "Destroy" : "Apply"} complete!`
      : status === "failed"
        ? `${destroy ? "Destroy" : "Apply"} failed.`
        : `${destroy ? "Destroy" : "Apply"} interrupted.`;
  const out: UiBody[] = [
    {
      type: "apply_result",
      result: {
        status,
        failed: result.failed.map((f) => f.address),
        skipped: result.skipped,
        serial: result.state.serial,
      },
      message: `${head} State saved (serial ${result.state.serial}).`,
    },
    retrySummary(operation, retries),
    {
      type: "change_summary",
      changes: { add: c.added, change: c.changed, import: c.imported, remove: c.destroyed, operation },
      message: `${head} Resources: ${resources}`,
    },
  ];
  if (status === "complete") {
    // A secret output's value is left out, as Terraform's machine-readable UI does.
    const secret = new Set(result.state.sensitive_outputs ?? []);
    const outputs = Object.fromEntries(
      Object.entries(result.state.outputs).map(([k, v]) => [
        k,
        secret.has(k) ? { sensitive: true, type: ctyType(v) } : { sensitive: false, type: ctyType(v), value: v },
      ]),
    );
    out.push({ type: "outputs", outputs, message: `Outputs: ${Object.keys(outputs).length}` });
  }
  return out;
}
