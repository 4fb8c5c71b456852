// What the console's browser drivers (e2e.ts, signin.ts, …) share: Debian's
// Chromium launched headless, a page that collects the console's errors and
// CSP reports, waiting on text, a confirmation dialog, screenshots.
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

// Generous: the whole suite may run beside a driver on two shared cores.
const WAIT = 60_000;

/** launch starts headless Chromium: $CHROMIUM (the Go test sets it), else /usr/bin/chromium. */
export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
      "--disable-component-update", "--no-first-run"],
  });
}

/** newPage opens a page in a fresh context; its console errors (other than 401/403/404 answers) and CSP reports go to problems. */
export async function newPage(browser: Browser, problems: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on("console", (m) => {
    const text = m.text();
    if (m.type() === "error" && !/Failed to load resource: the server responded with a status of (401|403|404)/.test(text)) problems.push(`console ${m.type()}: ${text}`);
    if (/Content[- ]Security[- ]Policy/i.test(text)) problems.push(`CSP: ${text}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  return page;
}

/** waitText waits until an element matching selector has text matching re. */
export async function waitText(page: Page, selector: string, re: RegExp): Promise<void> {
  await page.locator(selector).filter({ hasText: re }).first().waitFor();
}

/** shot saves a screenshot of page as dir/name.png; no dir, none. */
export async function shot(page: Page, dir: string, name: string): Promise<void> {
  if (dir) await page.screenshot({ path: join(dir, `${name}.png`) });
}

/** confirm fills the open dialog's fields (by selector) and presses its button named button. */
export async function confirm(page: Page, button: string, fields: Record<string, string> = {}): Promise<void> {
  const dialog = page.locator("dialog[open]");
  await dialog.waitFor();
  for (const [sel, value] of Object.entries(fields)) {
    const el = dialog.locator(sel);
    if ((await el.evaluate((n) => n.tagName)) === "SELECT") await el.selectOption(value);
    else await el.fill(value);
  }
  await dialog.getByRole("button", { name: button, exact: true }).click();
}
