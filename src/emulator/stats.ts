// Request and response counters per discovery method ID, for tests and benchmarks that assert
// how many calls a command made (and how many were refused or fault-injected).
import { METHOD_IDS } from "./routes.js";

export class Stats {
  private requests: Record<string, number> = {};
  private responses: Record<string, Record<string, number>> = {};

  constructor() {
    this.reset();
  }

  reset(): void {
    this.requests = Object.fromEntries(METHOD_IDS.map((m) => [m, 0]));
    this.responses = Object.fromEntries(METHOD_IDS.map((m) => [m, {}]));
  }

  request(method: string): void {
    this.requests[method] = (this.requests[method] ?? 0) + 1;
  }

  response(method: string, status: string): void {
    const r = (this.responses[method] ??= {});
    r[status] = (r[status] ?? 0) + 1;
  }

  toJSON(): { requests: Record<string, number>; responses: Record<string, Record<string, number>> } {
    return { requests: { ...this.requests }, responses: structuredClone(this.responses) };
  }
}
