import type { Command } from "commander";

// `converge emulator start`: filled in with src/emulator/.
export function registerEmulator(program: Command): void {
  program.command("emulator").description("Run the local cloud emulator");
}
