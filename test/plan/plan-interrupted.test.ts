// A plan whose signal aborts (Ctrl-C, --timeout, an automation caller's AbortSignal) stops: the
// resources not planned yet are not planned, and it says once that it was interrupted, instead of
// an error per policy whose read was cancelled. At 100,000 resources the old way (every resource
// walked, then an error with a source position per policy) kept the CLI busy for 45 s after Ctrl-C.
import { describe, expect, it } from "vitest";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { Policy } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { BINDING, bindingState, makeState, planOptions, rpName, STACK_HEAD, stackOf } from "../fixtures/builders.js";

const POLICIES = 30;
const stack = stackOf(
  `${STACK_HEAD}resources:\n` +
    Array.from(
      { length: POLICIES * 2 },
      (_, i) =>
        `  r${i}:\n    type: ${BINDING}\n    properties:\n      name: p${i % POLICIES}\n      role: ` +
        `roles/gkebackup.viewer${i}\n      members: [user:u${i}@example.com]\n`,
    ).join(""),
);
const state = makeState(
  "t",
  Array.from({ length: POLICIES * 2 }, (_, i) =>
    bindingState(
      `r${i}`,
      { name: rpName(`p${i % POLICIES}`), role: `roles/gkebackup.viewer${i}`, members: [`user:u${i}@example.com`] },
      "e",
    ),
  ),
);

const abortError = (reason: unknown) =>
  Object.assign(new Error("The operation was aborted", { cause: reason }), { name: "AbortError", code: "ABORT_ERR" });

/** A cloud whose `abortAt`-th read aborts `controller` (Ctrl-C while it is in flight) and is then
 *  cancelled; like the real client, a read asked for once the signal has aborted is not sent. */
function interruptedCloud(controller: AbortController, abortAt: number): { port: CloudPort; sent: string[] } {
  const sent: string[] = [];
  const port: CloudPort = {
    getIamPolicy: async (_kind, name, signal) => {
      if (signal?.aborted) throw abortError(signal.reason);
      sent.push(name);
      if (sent.length === abortAt) {
        controller.abort(new Error("SIGINT"));
        throw abortError(signal?.reason);
      }
      return { version: 1, etag: "e", bindings: [] } satisfies Policy;
    },
    getFederation: () => Promise.reject(new Error("unused")),
    modifyPolicy: () => Promise.reject(new Error("no writes in plan")),
  };
  return { port, sent };
}

describe("an interrupted plan", () => {
  for (const abortAt of [1, 10]) {
    it(`stops at the interruption and says so once (interrupted at read ${abortAt} of ${POLICIES})`, async () => {
      const controller = new AbortController();
      const cloud = interruptedCloud(controller, abortAt);
      const r = await plan(stack, state, cloud.port, { ...planOptions({ parallelism: 1 }), signal: controller.signal });
      expect(cloud.sent.length).toBe(abortAt);
      expect(r.plan.errored).toBe(true);
      const errors = r.diagnostics.filter((d) => d.severity === "error");
      expect(errors.map((d) => d.code)).toEqual(["plan/interrupted"]);
      expect(errors[0]!.summary).toMatch(/interrupted/);
      // Nothing after the interruption was planned: no resource of a policy read after it.
      expect(r.plan.resource_changes.length).toBeLessThan(stack.resources.size);
    });
  }

  it("a plan whose signal never aborts is not affected", async () => {
    const controller = new AbortController();
    const cloud = interruptedCloud(controller, Number.POSITIVE_INFINITY);
    const r = await plan(stack, state, cloud.port, { ...planOptions({ parallelism: 1 }), signal: controller.signal });
    expect(r.plan.errored).toBeFalsy();
    expect(r.plan.resource_changes.length).toBe(stack.resources.size);
  });
});
