// Drives the console's Queues page in headless Chromium against the weftd
// cmd/weftd/console_queues_test.go started: with one of a customer's tasks
// claimed and another waiting, the page shows the concurrency key at 1/1
// with one waiting, and the throttle key without a token, its next release
// ahead. Prints "ok" on its last line.
//
//   node console/test-dist/queues.mjs '<config JSON>'
import assert from "node:assert/strict";
import { launch, newPage, shot, waitText } from "./support/page.js";

interface Config {
  url: string;
  /** The concurrency key at its limit with one task waiting. */
  concurrencyKey: string;
  /** The throttle key without a token, one task waiting. */
  throttleKey: string;
  shots: string;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;

async function main(): Promise<void> {
  const browser = await launch();
  const problems: string[] = [];
  const page = await newPage(browser, problems);
  try {
    await page.goto(`${cfg.url}/ui/`);
    await page.locator("#nav-queues").click();
    await page.waitForURL(/#\/queues$/);
    await waitText(page, "h1", /Queues/);
    const queue = page.locator('section[data-queue="default"]');
    await queue.waitFor();
    const conc = queue.locator(`tr[data-flow-key="${cfg.concurrencyKey}"][data-flow-kind="concurrency"]`);
    await conc.waitFor();
    assert.equal((await conc.locator(".in-use").textContent())?.trim(), "1/1");
    assert.equal((await conc.locator(".waiting").textContent())?.trim(), "1");
    const thr = queue.locator(`tr[data-flow-key="${cfg.throttleKey}"][data-flow-kind="throttle"]`);
    await thr.waitFor();
    assert.match((await thr.locator(".tokens").textContent()) ?? "", /^0\/1 \(1\/1h\)$/);
    assert.equal((await thr.locator(".waiting").textContent())?.trim(), "1");
    assert.notEqual((await thr.locator(".next-release").textContent())?.trim(), "now");
    await shot(page, cfg.shots, "queues");
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
  console.log("ok");
}

main().catch((e) => {
  process.stderr.write(`queues: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
