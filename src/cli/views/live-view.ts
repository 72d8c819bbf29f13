// The live view: as the human view, but in a terminal the apply's progress is redrawn in place by
// ink (a spinner and elapsed time per change) instead of printed line by line.
import type { EngineEvent } from "../../contracts/events.js";
import type { Plan } from "../../generated/schemas.js";
import type { ProgressModel } from "./apply-progress.js";
import { HumanView } from "./human-view.js";
import type { ApplyReport } from "./view.js";

export class LiveView extends HumanView {
  private model: ProgressModel | undefined;
  private view: { stop: () => Promise<void> } | undefined;
  /** Events that came before ink was loaded. */
  private readonly pending: EngineEvent[] = [];
  private ready: Promise<void> | undefined;

  override applying(plan: Plan): void {
    super.applying(plan);
    this.ready = import("./apply-progress.js").then((m) => {
      this.model = new m.ProgressModel();
      for (const e of this.pending.splice(0)) this.model.on(e);
      this.view = m.startProgressView(this.model);
    });
  }

  protected override applyEvent(e: EngineEvent): void {
    if (this.model) this.model.on(e);
    else this.pending.push(e);
  }

  /** While the progress is drawn, the line is drawn with it (a line written beside ink's output
   *  is erased by its next redraw); before and after, it goes to stderr. */
  notice(line: string): void {
    if (this.model && this.view) this.model.notice(line);
    else process.stderr.write(`\n${line}\n`);
  }

  override async applied(report: ApplyReport): Promise<void> {
    await this.stopDrawing();
    await super.applied(report);
  }

  override async close(): Promise<void> {
    await this.stopDrawing();
    await super.close();
  }

  private async stopDrawing(): Promise<void> {
    await this.ready;
    const view = this.view;
    this.view = undefined;
    await view?.stop();
  }
}
