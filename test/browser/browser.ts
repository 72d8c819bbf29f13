// A real headless Chromium (the distribution's package, which .ci/run installs) driven by
// puppeteer-core, for the tests of converge's HTML review page. Every page the helpers open counts
// the requests it makes (intercepted) and the console errors and uncaught exceptions it raises.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { REPO } from "../e2e/helpers.js";

export { launchChromium } from "./chromium.js";

/** Where the browser tests keep their screenshots (gitignored). */
export const ARTIFACTS = join(REPO, "test-artifacts");

export interface OpenedPage {
  page: Page;
  /** Every request the page made, by URL (the page's own file included). */
  requests: string[];
  /** Console errors, uncaught exceptions and Content-Security-Policy violations. */
  errors: string[];
}

/** Opens the HTML file `file` at `width`×`height` and waits until its script has built the page. */
export async function openPage(browser: Browser, file: string, width = 1280, height = 800): Promise<OpenedPage> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  await page.setViewport({ width, height });
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    requests.push(r.url());
    // Only the page itself is served; anything else it asks for is refused (and counted).
    if (r.url() === `file://${file}`) void r.continue();
    else void r.abort();
  });
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`file://${file}`);
  await page.waitForSelector("#app[data-ready]");
  return { page, requests, errors };
}

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

/** The value of `js`, an expression evaluated in the page (these files are typed without the DOM). */
export function inPage<T>(page: Page, js: string): Promise<T> {
  return page.evaluate(js) as Promise<T>;
}

const q = (selector: string) => `[...document.querySelectorAll(${JSON.stringify(selector)})]`;

/** The trimmed text of each element `selector` matches. */
export const texts = (page: Page, selector: string) =>
  inPage<string[]>(page, `${q(selector)}.map((e) => e.textContent.trim())`);

/** Attribute `name` of each element `selector` matches. */
export const attributes = (page: Page, selector: string, name: string) =>
  inPage<(string | null)[]>(page, `${q(selector)}.map((e) => e.getAttribute(${JSON.stringify(name)}))`);

/** Types `value` into the input `selector` (as one input event). */
export const typeInto = (page: Page, selector: string, value: string) =>
  inPage<void>(
    page,
    `{ const i = document.querySelector(${JSON.stringify(selector)});
    i.value = ${JSON.stringify(value)}; i.dispatchEvent(new Event("input")); }`,
  );

/** Clicks the first element `selector` matches from the page's script (background tabs have no mouse). */
export const clickFirst = (page: Page, selector: string) =>
  inPage<void>(page, `document.querySelector(${JSON.stringify(selector)}).click()`);
