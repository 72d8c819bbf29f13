// An origin no connection can be made to (refused, no route, no such host): once the last
// UNREACHABLE_CALLS calls to it each ended so, after their retries, every later call to it fails at
// once, unsent, instead of retrying for about ten seconds each (a 1,000-resource plan against a
// wrong or offline endpoint took 135 s and printed 1,080 retry lines). An HTTP response from the
// origin, an error status too, clears it; server errors never make an origin unreachable.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import type { CloudError } from "../../src/cloud/errors.js";
import { noConnection, UNREACHABLE_CALLS } from "../../src/cloud/reachability.js";
import { fakeFetch, googleError, json, networkError, recordingSleep, type Reply } from "./fakes.js";

const rp = (i: number) => `projects/my-project/locations/us-central1/restorePlans/rp${i}`;
const OK = json(200, { version: 1, bindings: [], etag: "ACAB" });
const REFUSED = () => networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1");

function client(reply: (path: string) => Reply) {
  const { sleep } = recordingSleep();
  const f = fakeFetch((r) => reply(r.path));
  const c = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: f, retry: { sleep, random: () => 0.5 } });
  return { c, f };
}

const read = (c: CloudClient, i: number): Promise<CloudError> =>
  c.getIamPolicy("restorePlan", rp(i)).then(
    () => {
      throw new Error("the read succeeded");
    },
    (e: unknown) => e as CloudError,
  );

describe("an unreachable origin", () => {
  it(`after ${UNREACHABLE_CALLS} calls ended unable to connect, later calls to it fail at once, unsent`, async () => {
    const { c, f } = client(REFUSED);
    for (let i = 0; i < UNREACHABLE_CALLS; i++)
      expect(await read(c, i)).toMatchObject({ status: "UNAVAILABLE", attempts: 10 });
    const sentBefore = f.calls.length;
    expect(sentBefore).toBe(UNREACHABLE_CALLS * 10);
    for (let i = UNREACHABLE_CALLS; i < 20; i++) {
      const err = await read(c, i);
      expect(err).toMatchObject({ status: "UNAVAILABLE", httpStatus: 0, attempts: 0, retryable: false });
      expect(err.message).toBe(
        `getIamPolicy ${rp(i)}: UNAVAILABLE: not sent: http://127.0.0.1:1 could not be reached by the last ` +
          `${UNREACHABLE_CALLS} calls to it (network error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1)`,
      );
      // Why it was not sent stays readable: the plan reports such reads as one error.
      expect(noConnection(err)).toBe(true);
    }
    expect(f.calls.length).toBe(sentBefore);
  });

  it("an HTTP response in between (an error status too) starts the count again", async () => {
    let answer = false;
    const { c, f } = client(() => (answer ? googleError(404, "NOT_FOUND", "no such plan") : REFUSED()));
    for (let i = 0; i < UNREACHABLE_CALLS - 1; i++) await read(c, i);
    answer = true;
    expect(await read(c, 100)).toMatchObject({ status: "NOT_FOUND" });
    answer = false;
    for (let i = 0; i < UNREACHABLE_CALLS - 1; i++) await read(c, i);
    const sent = f.calls.length;
    expect(await read(c, 200)).toMatchObject({ attempts: 10 });
    expect(f.calls.length).toBe(sent + 10);
  });

  it("server errors never make it unreachable: each call is sent and retried", async () => {
    const { c, f } = client(() => googleError(503, "UNAVAILABLE", "backend overloaded"));
    for (let i = 0; i < UNREACHABLE_CALLS + 2; i++)
      expect(await read(c, i)).toMatchObject({ status: "UNAVAILABLE", httpStatus: 503, attempts: 10 });
    expect(f.calls.length).toBe((UNREACHABLE_CALLS + 2) * 10);
  });

  it("a host not found counts as unreachable too (it is not retried)", async () => {
    const { c, f } = client(() => networkError("ENOTFOUND", "getaddrinfo ENOTFOUND nowhere.example"));
    for (let i = 0; i < 10; i++) await read(c, i);
    expect(f.calls.length).toBe(UNREACHABLE_CALLS);
  });

  it("a call that succeeds is not affected", async () => {
    const { c, f } = client(() => OK);
    for (let i = 0; i < 5; i++) expect(await c.getIamPolicy("restorePlan", rp(i))).toMatchObject({ etag: "ACAB" });
    expect(f.calls.length).toBe(5);
  });
});
