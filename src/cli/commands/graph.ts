import type { Command } from "commander";
import { scrubText, secretList } from "../../config/redact.js";
import { action, addStackOptions, openStackOf, writeOut, type StackOptions } from "../common.js";

export function registerGraph(program: Command): void {
  const cmd = program.command("graph").description("Print the dependency graph in DOT format (dot -Tsvg to draw it)");
  addStackOptions(cmd, { json: false, cloud: false }).action(
    action(async (o: StackOptions) => {
      // A program's direct invoke is an error here: graph does not call the cloud.
      const { stack } = await openStackOf(o, { offline: "graph" });
      // An address built from a secret (a forEach key) is shown as plan shows it.
      const secrets = secretList(stack.secrets);
      const dot = stack.graph.toDot(
        (id) => {
          const r = stack.resources.get(id);
          if (r) return { label: `${id}\n${r.type}` };
          const v = stack.variables.get(id);
          return v?.invoke ? { label: `${id}\n${v.invoke.token}`, shape: "note" } : { label: id, shape: "ellipse" };
        },
        (text) => scrubText(text, secrets),
      );
      await writeOut(dot);
    }),
  );
}
