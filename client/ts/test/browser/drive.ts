// Drives headless Chromium (Debian's, through playwright-core; playwright's
// own browser download is not used) to each page URL given as an argument,
// waits for the page to finish, and prints one JSON line:
// [{ url, page: <the page's #results JSON>, console: [...], failed: [...] }].
//
//   node client/ts/dist-test/browser/drive.mjs <url>...
//
// CHROMIUM names the browser (default /usr/bin/chromium).
import { chromium } from "playwright-core";

const urls = process.argv.slice(2);
if (urls.length === 0) {
  console.error("usage: drive.mjs <page url>...");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // As root, without a sandbox; no background traffic to the closed network.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
  ],
});
try {
  const out = [];
  for (const url of urls) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const consoleLines: string[] = [];
    const failed: string[] = [];
    page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
    page.on("requestfailed", (r) => failed.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText ?? ""}`));
    await page.goto(url);
    await page.waitForSelector("body[data-done]", { timeout: 20000 });
    const text = (await page.textContent("#results")) ?? "null";
    out.push({ url, page: JSON.parse(text), console: consoleLines, failed });
    await context.close();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await browser.close();
}
