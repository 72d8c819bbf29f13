import type { Command } from "commander";
import { action, addStackOptions, openStackOf, writeOut, type StackOptions } from "../common.js";

export function registerGraph(program: Command): void {
  const cmd = program.command("graph").description("Print the dependency graph in DOT format (dot -Tsvg to draw it)");
  addStackOptions(cmd, { json: false, cloud: false }).action(
    action(async (o: StackOptions) => {
      const { stack } = await openStackOf(o);
      const dot = stack.graph.toDot((id) => {
        const r = stack.resources.get(id);
        if (r) return { label: `${id}\n${r.type}` };
        const v = stack.variables.get(id);
        return v?.invoke ? { label: `${id}\n${v.invoke.token}`, shape: "note" } : { label: id, shape: "ellipse" };
      });
      await writeOut(dot);
    }),
  );
}
