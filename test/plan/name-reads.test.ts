// Policies named by interpolation (`name: ${team}-N`) are read as soon as the values the name
// uses are known, all at once (up to --parallelism), not one after the other as the walk reaches
// each resource; each is still read once, and only when the plan reads it (a create).
import { describe, expect, it } from "vitest";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { Policy } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { BINDING, bindingState, makeState, planOptions, rpName, STACK_HEAD, stackOf } from "../fixtures/builders.js";

const N = 6;
const stackText = (): string => {
  const resources = Array.from(
    { length: N },
    (_, i) =>
      `  r${i}:\n    type: ${BINDING}\n    properties:\n      name: \${team}-${i}\n      role: ` +
      `roles/gkebackup.viewer\n      members: [user:u${i}@example.com]\n`,
  );
  return `${STACK_HEAD}variables:\n  team: sre\nresources:\n${resources.join("")}`;
};

/** A cloud whose reads answer only once `N` reads are waiting (or on `flush`), recording the most at once. */
function slowCloud() {
  const calls: string[] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const answerAll = () => {
    for (const w of waiting.splice(0)) w();
  };
  const port: CloudPort = {
    async getIamPolicy(_kind, name) {
      calls.push(name);
      inFlight++;
      most = Math.max(most, inFlight);
      const answered = new Promise<void>((resolve) => waiting.push(resolve));
      // Answer everything once nothing else can start (a fixed time would make it a timed test).
      setImmediate(() => setImmediate(answerAll));
      await answered;
      inFlight--;
      return { version: 1, etag: "e", bindings: [] } satisfies Policy;
    },
    getFederation: () => Promise.reject(new Error("unused")),
    modifyPolicy: () => Promise.reject(new Error("unused")),
  };
  return { port, calls, most: () => most };
}

describe("reads of interpolated policy names", () => {
  it("a cold plan reads them together as soon as the variable is known, each once", async () => {
    const c = slowCloud();
    const r = await plan(stackOf(stackText()), undefined, c.port, planOptions({ parallelism: 10 }));
    expect(r.plan.errored).toBe(false);
    expect(r.plan.resource_changes.map((x) => x.change.action)).toEqual(Array(N).fill("create"));
    expect([...c.calls].sort()).toEqual(Array.from({ length: N }, (_, i) => rpName(`sre-${i}`)).sort());
    expect(c.most()).toBe(N);
  });

  it("a resource the state has is not read ahead by its new name (its planning reads the state's)", async () => {
    const c = slowCloud();
    const state = makeState("t", [
      bindingState(
        "r0",
        { name: rpName("old"), role: "roles/gkebackup.viewer", members: ["user:u0@example.com"] },
        "e",
      ),
    ]);
    await plan(stackOf(stackText()), state, c.port, planOptions({ parallelism: 10 }));
    expect(c.calls).toContain(rpName("old"));
    expect(c.calls).not.toContain(rpName("sre-0"));
    expect(c.calls).toHaveLength(N);
  });
});
