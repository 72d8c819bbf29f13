// Where program stacks run. The CLI runs each in a worker thread (./program-isolated.ts): its main
// thread catches the command's signals (src/cli/interrupt.ts), and a program that spins there
// must not keep Ctrl-C or SIGTERM from ending the command. Elsewhere (the Automation API, unit
// tests) a program runs in the caller's thread, as the caller's code.
let isolated = false;

/** From now on, program stacks loaded from a file run in a worker thread. */
export function isolatePrograms(): void {
  isolated = true;
}

/** Whether program stacks loaded from a file run in a worker thread. */
export function programsIsolated(): boolean {
  return isolated;
}
