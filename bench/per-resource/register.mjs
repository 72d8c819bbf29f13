// Preloaded into the measured CLI process for the per-resource baseline
// (`node --import ./bench/per-resource/register.mjs dist/cli/main.js …`: the unbundled CLI, whose
// modules the hook can tell apart): the CLI runs unchanged,
// except that src/connect/cloud.ts's openCloud hands the engine the per-resource CloudPort of
// ./port.mjs. Nothing of this is in the product: converge itself always batches.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
