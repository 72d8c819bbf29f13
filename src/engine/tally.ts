// The counts of an apply ("2 added, 1 changed, 0 destroyed"), made by a subscriber to the
// engine's events: the executor only says which step finished, and every view counts alike.
import type { Plan } from "../generated/schemas.js";
import { displayAction } from "../contracts/actions.js";
import type { EngineEvent } from "../contracts/events.js";

export interface ChangeCounts {
  added: number;
  changed: number;
  destroyed: number;
  imported: number;
  /** Data sources read during apply. */
  read: number;
}

export const noChanges = (): ChangeCounts => ({ added: 0, changed: 0, destroyed: 0, imported: 0, read: 0 });

export class ChangeTally {
  readonly counts = noChanges();
  /** Addresses whose import also updates the grant (counted as imported and changed). */
  private readonly importUpdates = new Set<string>();

  constructor(plan: Plan) {
    for (const c of plan.resource_changes) if (displayAction(c) === "import-update") this.importUpdates.add(c.address);
  }

  readonly onEvent = (e: EngineEvent): void => {
    if (e.type !== "step" || e.phase !== "done") return;
    const n = this.counts;
    switch (e.action) {
      case "create":
        n.added++;
        break;
      case "update":
        n.changed++;
        break;
      case "delete":
        n.destroyed++;
        break;
      case "replace":
        n.added++;
        n.destroyed++;
        break;
      case "read":
        n.read++;
        break;
      case "import":
        n.imported++;
        if (this.importUpdates.has(e.address)) n.changed++;
        break;
      default:
    }
  };
}
