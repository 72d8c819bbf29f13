// Request and response counters per discovery method ID, for tests and benchmarks that assert
// how many calls a command made (and how many were refused or fault-injected), and the answers
// lost after a write was committed (lostResponses: the write is in the world all the same).
import { METHOD_IDS } from "./routes.js";

type Counts = Record<string, Record<string, number>>;

function count(counts: Counts, method: string, key: string): void {
  const r = (counts[method] ??= {});
  r[key] = (r[key] ?? 0) + 1;
}

export class Stats {
  private requests: Record<string, number> = {};
  private responses: Counts = {};
  private lostResponses: Counts = {};

  constructor() {
    this.reset();
  }

  reset(): void {
    this.requests = Object.fromEntries(METHOD_IDS.map((m) => [m, 0]));
    this.responses = Object.fromEntries(METHOD_IDS.map((m) => [m, {}]));
    this.lostResponses = {};
  }

  request(method: string): void {
    this.requests[method] = (this.requests[method] ?? 0) + 1;
  }

  response(method: string, status: string): void {
    count(this.responses, method, status);
  }

  /** A committed write whose answer was lost: `kind` is "500", "503", "504" or "reset". A
   *  status answer is also counted in responses (by its code); a reset answered nothing. */
  lostResponse(method: string, kind: string): void {
    count(this.lostResponses, method, kind);
  }

  toJSON(): { requests: Record<string, number>; responses: Counts; lostResponses: Counts } {
    return {
      requests: { ...this.requests },
      responses: structuredClone(this.responses),
      lostResponses: structuredClone(this.lostResponses),
    };
  }
}
