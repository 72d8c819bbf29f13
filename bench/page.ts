// The review page at scale (issue 43): `converge plan --format html` of the generated 10,000-
// resource stack's cold plan (10,000 or more access changes) is opened in headless Chromium
// (test/browser/chromium.ts); measured: the page's size, the time from navigation until its
// script has built the page, and the time a principal filter and a change filter take to apply
// (the filter and the redraw of the matrix, up to the next frame). Reported, never asserted.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchEmulator } from "./emulator.js";
import type { ExtraContext } from "./extras.js";
import type { Generated } from "./generate.js";
import { runCli } from "./measure.js";
import { launchChromium } from "../test/browser/chromium.js";

export interface PageResult {
  resources: number;
  accessChanges: number;
  pageBytes: number;
  /** `plan --format html`'s wall time */
  planMs: number;
  runs: number;
  /** Per run: navigation until the page is built */
  loadMs: number[];
  /** Per run: a principal filter (one principal's name typed) applied and drawn */
  principalFilterMs: number[];
  /** Per run: the change filter set to "revoked", then back to every grant, each applied and drawn */
  changeFilterMs: number[];
}

/** Sets `selector`'s value, sends its event, and resolves with the ms until the next frame after it. */
const APPLY = `(async (selector, value, event) => {
  const input = document.querySelector(selector);
  const t0 = performance.now();
  input.value = value;
  input.dispatchEvent(new Event(event));
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return performance.now() - t0;
})`;

export async function runPage(
  ctx: ExtraContext,
  emulator: BenchEmulator,
  inputs: Generated,
  runs: number,
): Promise<PageResult> {
  const dir = join(ctx.workdir, "page");
  const env = { ...process.env, NO_COLOR: "1", CLOUDNATIVE_EMULATOR_HOST: emulator.hostPort };
  const args = ["plan", "--format", "html", "-f", inputs.stack, "--state", join(dir, "state.json")];
  mkdirSync(dir, { recursive: true });
  const m = await runCli(ctx.bin, args, { cwd: dir, env, scratch: dir, useGnuTime: false, abort: emulator.crashed });
  if (m.exitCode !== 0) throw new Error(`plan --format html exited ${m.exitCode}: ${m.stderrTail}`);
  const html = readFileSync(join(dir, "stdout.txt"), "utf8");
  const file = join(dir, "review.html");
  writeFileSync(file, html);
  const island = /<script type="application\/json" id="review-data">(.*?)<\/script>/s.exec(html)?.[1] ?? "{}";
  const data = JSON.parse(island) as { rows: number[][]; principals: [string, number][] };
  const changes = data.rows.filter((r) => r[4] !== 0).length;
  const r: PageResult = {
    resources: inputs.shape.n,
    accessChanges: changes,
    pageBytes: Buffer.byteLength(html),
    planMs: m.wallMs,
    runs,
    loadMs: [],
    principalFilterMs: [],
    changeFilterMs: [],
  };
  const browser = await launchChromium();
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const t0 = performance.now();
      await page.goto(`file://${file}`);
      await page.waitForSelector("#app[data-ready]", { timeout: 120_000 });
      r.loadMs.push(performance.now() - t0);
      const principal = data.principals[Math.floor(data.principals.length / 2)]![0];
      const typed = `${APPLY}("#filter-principal", ${JSON.stringify(principal)}, "input")`;
      r.principalFilterMs.push((await page.evaluate(typed)) as number);
      await page.evaluate(`${APPLY}("#filter-principal", "", "input")`);
      const revoked = (await page.evaluate(`${APPLY}("#filter-change", "2", "change")`)) as number;
      const every = (await page.evaluate(`${APPLY}("#filter-change", "all", "change")`)) as number;
      r.changeFilterMs.push(revoked + every);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const loads = r.loadMs.map((v) => v.toFixed(0)).join("/");
  ctx.log(`  review page: ${changes} access changes, ${(r.pageBytes / 1024).toFixed(0)} KiB, load ${loads} ms`);
  return r;
}
