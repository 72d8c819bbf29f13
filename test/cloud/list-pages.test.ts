// The client's list calls (discovery): the wire Google documents (GET {parent}/restorePlans and
// {parent}/endpoints on the service's hosts, projects.locations.list), every page followed through
// nextPageToken, a retried page, a malformed page and a server that repeats its token refused.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { CloudError } from "../../src/cloud/errors.js";
import { fakeFetch, googleError, json, type Reply } from "./fakes.js";

const env = { CLOUDNATIVE_ACCESS_TOKEN: "tok-123456" };
const P = "projects/my-project";

function client(replies: Reply[]) {
  const f = fakeFetch(replies);
  return { c: new CloudClient({ env, fetch: f, retry: { sleep: async () => {} } }), f };
}

describe("CloudClient list calls", () => {
  it("restore plans: every page followed, the token sent back, a 503 page retried", async () => {
    const { c, f } = client([
      json(200, { restorePlans: [{ name: `${P}/locations/us-central1/restorePlans/a` }], nextPageToken: "t1" }),
      googleError(503, "UNAVAILABLE", "try again"),
      json(200, { restorePlans: [{ name: `${P}/locations/us-central1/restorePlans/b` }], nextPageToken: "t2" }),
      json(200, {}),
    ]);
    const names = await c.listObjects("restorePlan", "my-project", "us-central1");
    expect(names).toEqual([`${P}/locations/us-central1/restorePlans/a`, `${P}/locations/us-central1/restorePlans/b`]);
    const urls = f.calls.map((r) => r.url);
    const base = `https://gkebackup.googleapis.com/v1/${P}/locations/us-central1/restorePlans?pageSize=1000`;
    expect(urls).toEqual([base, `${base}&pageToken=t1`, `${base}&pageToken=t1`, `${base}&pageToken=t2`]);
  });

  it("endpoints on the regional host; locations through projects.locations.list", async () => {
    const { c, f } = client([
      json(200, { endpoints: [{ name: `${P}/locations/europe-west4/endpoints/churn` }] }),
      json(200, { locations: [{ name: `${P}/locations/europe-west4`, locationId: "europe-west4" }] }),
    ]);
    expect(await c.listObjects("endpoint", "my-project", "europe-west4")).toEqual([
      `${P}/locations/europe-west4/endpoints/churn`,
    ]);
    expect(await c.listLocations("endpoint", "my-project")).toEqual(["europe-west4"]);
    expect(f.calls[0]!.url).toBe(
      `https://europe-west4-aiplatform.googleapis.com/v1beta1/${P}/locations/europe-west4/endpoints?pageSize=1000`,
    );
    expect(f.calls[1]!.path).toBe(`/v1beta1/${P}/locations`);
  });

  it("refuses a malformed page, a repeated token and a bad segment (that one unsent)", async () => {
    const bad = client([json(200, { restorePlans: [{ id: "x" }] })]);
    await expect(bad.c.listObjects("restorePlan", "my-project", "l")).rejects.toThrow(/has no name/);
    const loop = client([json(200, { nextPageToken: "same" }), json(200, { nextPageToken: "same" })]);
    await expect(loop.c.listObjects("restorePlan", "my-project", "l")).rejects.toThrow(/same page token twice/);
    const unsent = client([]);
    const e = await unsent.c.listObjects("restorePlan", "my/project", "l").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CloudError);
    expect(unsent.f.calls).toHaveLength(0);
  });
});
