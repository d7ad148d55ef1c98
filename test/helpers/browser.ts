/**
 * A real browser for the console's tests: Debian's Chromium (`apt-get install chromium`, which
 * .ci/run installs), driven by playwright-core, the one file that imports it. A machine without
 * Chromium fails the test saying how to install it: a browser test never skips silently.
 * Screenshots go to .rewind/screenshots/ (git-ignored).
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT } from "./paths.ts";

export type { Browser, BrowserContext, Page } from "playwright-core";

/** Where Debian puts Chromium; CHROMIUM_PATH names another. */
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

export const SCREENSHOT_DIR = path.join(REPO_ROOT, ".rewind", "screenshots");

function chromiumPath(): string {
  const named = process.env["CHROMIUM_PATH"];
  const found = named ? [named] : CANDIDATES.filter((candidate) => existsSync(candidate));
  if (!found[0] || !existsSync(found[0]))
    throw new Error(
      `Chromium is not installed (looked for ${named ?? CANDIDATES.join(", ")}): install it with \`apt-get install -y chromium\` (.ci/run does), or name it with CHROMIUM_PATH`,
    );
  return found[0];
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    // Root (CI, these machines) cannot use Chromium's sandbox; the pages are our own, on loopback.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** Writes a screenshot of the page (its whole length unless `fullPage` is false) to SCREENSHOT_DIR/<name>.png; answers its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? true });
  return file;
}
