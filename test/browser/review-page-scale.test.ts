// Issue 43, item 3: a page of 10,000 access changes is usable: the matrix shows a page of it (50
// principals by 12 objects), pages through it, and filters to exactly one principal's rows. No
// time is asserted (npm run bench measures it: bench/page.ts).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessChange } from "../../src/generated/schemas.js";
import { planHtml } from "../../src/cli/views/html/page.js";
import { quickstartPlan } from "../cli/plans.js";
import { useTempDir } from "../e2e/helpers.js";
import { attributes, clickFirst, launchChromium, openPage, type OpenedPage, texts, typeInto } from "./browser.js";

const PRINCIPALS = 500;
const OBJECTS = 40;
const ws = useTempDir("converge-review-scale-");
let browser: Browser;
let opened: OpenedPage;
let changes: AccessChange[];

beforeAll(async () => {
  const plan = await quickstartPlan();
  // 500 principals x 20 objects each: 10,000 changes, one in ten a revocation.
  // Principals 0-24 on objects 0-19, 25-49 on objects 20-39, and so on.
  const object = (i: number) => (i % 20) + ((20 * ((i / 20 / 25) | 0)) % OBJECTS);
  changes = Array.from({ length: PRINCIPALS * 20 }, (_, i): AccessChange => ({
    object: `projects/p/locations/l/restorePlans/o${String(object(i)).padStart(2, "0")}`,
    kind: "restorePlan",
    principal: `user:u${String((i / 20) | 0).padStart(3, "0")}@example.com`,
    role: "roles/gkebackup.viewer",
    action: i % 10 ? "grant" : "revoke",
    addresses: ["restoreViewers"],
  }));
  plan.access_changes = { changes, incomplete: [] };
  plan.resource_changes = [];
  const file = join(ws.dir, "large.html");
  await writeFile(file, planHtml(plan, []));
  browser = await launchChromium();
  opened = await openPage(browser, file);
});

afterAll(async () => {
  await browser?.close();
});

describe("a review page of 10,000 access changes", () => {
  it("shows a page of the matrix and pages through it", async () => {
    expect(await texts(opened.page, "#match-count")).toEqual(["10,000 grants match: 500 principals × 40 objects"]);
    expect(await attributes(opened.page, "#matrix tr[data-principal]", "data-principal")).toHaveLength(50);
    expect(await attributes(opened.page, "#matrix th[data-object]", "data-object")).toHaveLength(12);
    await clickFirst(opened.page, "#rows-next");
    const second = await attributes(opened.page, "#matrix tr[data-principal]", "data-principal");
    expect(second[0]).toBe("user:u050@example.com");
    expect(await texts(opened.page, "#revocations tbody tr")).toHaveLength(200);
    await clickFirst(opened.page, "#revocations-more");
    expect(await texts(opened.page, "#revocations tbody tr")).toHaveLength(400);
  });

  it("filters to exactly one principal's rows, across every object", async () => {
    const principal = "user:u123@example.com";
    await typeInto(opened.page, "#filter-principal", principal);
    expect(await attributes(opened.page, "#matrix tr[data-principal]", "data-principal")).toEqual([principal]);
    const objects = new Set(changes.filter((c) => c.principal === principal).map((c) => c.object));
    const count = `20 grants match: 1 principal × ${objects.size} objects`;
    expect(await texts(opened.page, "#match-count")).toEqual([count]);
    await typeInto(opened.page, "#filter-principal", "");
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toHaveLength(1);
  });
});
