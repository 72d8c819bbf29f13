// The Chromium the review page's tests and benchmark drive: the distribution's package (which
// .ci/run installs) through puppeteer-core. No test-runner imports: bench/ uses it too.
import { existsSync } from "node:fs";
import puppeteer, { type Browser } from "puppeteer-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** The Chromium to drive: $CHROMIUM_PATH, else the distribution's. Missing, the test fails and
 *  says how to install it. */
export function chromiumPath(): string {
  const found = [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p) => p && existsSync(p));
  if (!found) {
    throw new Error("no Chromium: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH");
  }
  return found;
}

export function launchChromium(): Promise<Browser> {
  // The pages are the tests' own files; root in a container (no user namespaces) gets no sandbox.
  const args = ["--no-first-run", "--disable-gpu", "--disable-dev-shm-usage", "--no-sandbox"];
  return puppeteer.launch({ executablePath: chromiumPath(), headless: true, args });
}
