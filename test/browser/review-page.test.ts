// Issue 43: the access review page (`plan --format html`, `show --format html PLANFILE`) opened in
// a real headless Chromium. The built CLI plans against the real emulator over loopback; the page
// must agree with `plan --json`, filter by principal exactly, raise no console error, make no
// request, and show a hostile member name (an out-of-band grant the plan revokes) as text.
// Screenshots of the quickstart's page are kept in test-artifacts/. Needs `npm run build`.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessChange, EmulatorWorld } from "../../src/generated/schemas.js";
import { bindingYaml, ep, memberYaml, rp, stackHead } from "../e2e/apply-helpers.js";
import { expectExit, REPO, runCli, useStackWorkspace, useTempDir } from "../e2e/helpers.js";
import {
  artifactPath,
  attributes,
  clickFirst,
  inPage,
  launchChromium,
  openPage,
  type OpenedPage,
  texts,
  typeInto,
} from "./browser.js";

/** A member name that is markup: as HTML it would run a script and decode entities. */
const HOSTILE =
  "principal://iam.googleapis.com/locations/global/workforcePools/staff/subject/" +
  "<script>window.__pwned=1</script>&amp;&lt;<b>x</b>";
const EXPR = 'request.time < timestamp("2031-01-01T00:00:00Z")';

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: {
        bindings: [
          {
            role: "roles/gkebackup.viewer",
            members: ["user:keep@example.com", HOSTILE, "user:old@example.com"],
          },
        ],
      },
    },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const STACK = `${stackHead("review")}${bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", [
  "user:keep@example.com",
  "user:new@example.com",
  "group:data@example.com",
])}${memberYaml(
  "invoker",
  "churn",
  "roles/aiplatform.user",
  "serviceAccount:ci@my-project.iam.gserviceaccount.com",
  `      condition: { title: "until 2031 <i>", description: "x & y", expression: '${EXPR}' }\n`,
)}`;

const ws = useStackWorkspace(SEED, "converge-review-page-", STACK, "review.json");
const quick = useTempDir("converge-review-quickstart-");
let browser: Browser;
let changes: AccessChange[];
let review: OpenedPage;
let shownFromFile: OpenedPage;

const cli = (args: string[]) => runCli([...args, "-f", ws.stackFile, "--state", ws.statePath], { emulator: ws.emu });

beforeAll(async () => {
  const html = await cli(["plan", "--format", "html"]);
  expectExit(html, 0);
  const json = await cli(["plan", "--json"]);
  expectExit(json, 0);
  type PlanJson = { converge: { access_changes: { changes: AccessChange[] } } };
  changes = (JSON.parse(json.stdout) as PlanJson).converge.access_changes.changes;
  const saved = await cli(["plan", "--out", join(ws.dir, "review.plan")]);
  expectExit(saved, 0);
  const shown = await runCli(["show", "--format", "html", join(ws.dir, "review.plan")], { cwd: ws.dir });
  expectExit(shown, 0);
  await writeFile(join(ws.dir, "review.html"), html.stdout);
  await writeFile(join(ws.dir, "shown.html"), shown.stdout);
  browser = await launchChromium();
  review = await openPage(browser, join(ws.dir, "review.html"));
  shownFromFile = await openPage(browser, join(ws.dir, "shown.html"));
});

afterAll(async () => {
  await browser?.close();
});

/** The matrix's chips as "principal|role|object|state", sorted. */
async function matrixCells(page: Page): Promise<string[]> {
  const cells = await inPage<string[]>(
    page,
    `(() => {
    const objects = [...document.querySelectorAll("#matrix thead th[data-object]")]
      .map((th) => th.getAttribute("data-object"));
    return [...document.querySelectorAll("#matrix tbody tr[data-principal]")].flatMap((tr) =>
      [...tr.querySelectorAll("td")].flatMap((td, i) => [...td.querySelectorAll(".chip")].map((c) =>
        [tr.getAttribute("data-principal"), c.getAttribute("data-role"), objects[i], c.getAttribute("data-state")]
          .join("|"))));
  })()`,
  );
  return cells.sort();
}

const expected = (list: readonly AccessChange[]) =>
  list.map((c) => [c.principal, c.role, c.object, c.action === "grant" ? "added" : "revoked"].join("|")).sort();

describe("the review page in Chromium", () => {
  it("shows the plan's counts", async () => {
    const count = async (key: string) => (await texts(review.page, `[data-count=${key}] b`))[0];
    expect(await count("granted")).toBe(String(changes.filter((c) => c.action === "grant").length));
    expect(await count("revoked")).toBe(String(changes.filter((c) => c.action === "revoke").length));
    expect(await count("principals")).toBe(String(new Set(changes.map((c) => c.principal)).size));
    expect(await count("objects")).toBe(String(new Set(changes.map((c) => c.object)).size));
    expect(changes.length).toBe(5);
  });

  it("lists every revocation first, with its cause", async () => {
    const revokes = changes.filter((c) => c.action === "revoke");
    const rows = await inPage<string[][]>(
      review.page,
      `[...document.querySelectorAll("#revocations tbody tr")]
        .map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent))`,
    );
    expect(rows.map((r) => [r[0], r[1], r[3]])).toEqual(revokes.map((c) => [c.principal, c.role, c.object]));
    for (const r of rows) expect(r[4]).toBe("granted outside converge: viewers holds the binding authoritatively");
    const sections = await attributes(review.page, "main > *", "id");
    expect(sections.slice(0, 2)).toEqual(["verdict", "revocations"]);
  });

  it("has a matrix whose changed cells are the plan's access changes", async () => {
    await review.page.select("#filter-change", "changed");
    expect(await matrixCells(review.page)).toEqual(expected(changes));
    await review.page.select("#filter-change", "all");
    // The unchanged grant the binding keeps.
    const kept = `user:keep@example.com|roles/gkebackup.viewer|${rp("nightly")}|unchanged`;
    expect(await matrixCells(review.page)).toContain(kept);
  });

  it("filters by a principal to exactly that principal's rows", async () => {
    for (const principal of ["user:new@example.com", HOSTILE]) {
      await typeInto(review.page, "#filter-principal", principal);
      expect(await attributes(review.page, "#matrix tr[data-principal]", "data-principal")).toEqual([principal]);
      expect((await matrixCells(review.page)).filter((c) => !c.endsWith("|unchanged"))).toEqual(
        expected(changes.filter((c) => c.principal === principal)),
      );
    }
  });

  it("shows the hostile member name as text and never runs it", async () => {
    expect(await texts(review.page, "#revocations tbody td:first-child")).toContain(HOSTILE);
    expect(await inPage(review.page, "typeof window.__pwned")).toBe("undefined");
    expect(await inPage(review.page, `document.querySelectorAll("script").length`)).toBe(2);
    expect(await texts(review.page, "main b, main i")).not.toContain("x");
    // A click from the page's own script (the page is a background tab: no mouse there).
    await clickFirst(review.page, "#revocations [data-open-object]");
    expect(await texts(review.page, "#detail li")).toContain(`\u2212 ${HOSTILE}`);
  });

  it("shows one principal's access before and after on every object", async () => {
    await typeInto(review.page, "#filter-principal", "");
    const principal = "user:new@example.com";
    await clickFirst(review.page, `#matrix tr[data-principal="${principal}"] [data-open-principal]`);
    expect(await texts(review.page, "#detail h2")).toEqual([`Principal ${principal}`]);
    const rows = await inPage<string[][]>(
      review.page,
      `[...document.querySelectorAll("#detail tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent))`,
    );
    const mine = changes.filter((c) => c.principal === principal);
    expect(rows.map((r) => r[0])).toEqual([...new Set(mine.map((c) => c.object))].sort());
    for (const c of mine) {
      const row = rows.find((r) => r[0] === c.object)!;
      if (c.action === "grant") expect(row[2]).toContain(`+ ${c.role}`);
      else expect([row[1], row[2]]).toEqual([c.role, "\u2013"]);
    }
  });

  it("shows conditions with their expiry, escaped", async () => {
    await typeInto(review.page, "#filter-principal", "");
    const chip = "+ roles/aiplatform.user if \u201cuntil 2031 <i>\u201d (expires 2031-01-01T00:00:00.000Z)";
    expect(await texts(review.page, "#matrix .chip")).toContain(chip);
  });

  it("is the same page from a saved plan (show --format html)", async () => {
    expect(await matrixCells(shownFromFile.page)).toEqual(await matrixCells(review.page));
    const revocations = "#revocations tbody tr";
    expect(await texts(shownFromFile.page, revocations)).toEqual(await texts(review.page, revocations));
  });

  it("makes no request and logs no error", () => {
    for (const opened of [review, shownFromFile]) {
      expect(opened.errors).toEqual([]);
      expect(opened.requests).toHaveLength(1);
    }
  });
});

describe("the quickstart's page", () => {
  it("renders at desktop and phone sizes (screenshots in test-artifacts/)", async () => {
    const dir = join(REPO, "examples", "quickstart");
    const r = await runCli(["plan", "--format", "html", "--state", join(quick.dir, "q.json")], { cwd: dir });
    expectExit(r, 0);
    await mkdir(quick.dir, { recursive: true });
    const file = join(quick.dir, "quickstart.html");
    await writeFile(file, r.stdout);
    for (const [w, h] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      const opened = await openPage(browser, file, w, h);
      await opened.page.screenshot({ path: artifactPath(`quickstart-review-${w}x${h}.png`) });
      expect(opened.errors).toEqual([]);
      expect(opened.requests).toHaveLength(1);
      expect(await texts(opened.page, "#revocations tbody td:first-child")).toEqual(["user:carol@example.com"]);
      await opened.page.close();
    }
  });
});
