// Drives the console's Queues page's fairness keys (docs/semantics.md#fairness)
// in headless Chromium against the weftd cmd/weftd/console_fairness_test.go
// started, whose ready tasks carry fairness keys: per priority, each key's
// backlog, weight and share of the priority's claims, as DescribeQueue
// answered them. Prints "ok" on its last line.
//
//   node console/test-dist/fairness.mjs '<config JSON>'
import assert from "node:assert/strict";
import { launch, newPage, shot, waitText } from "./support/page.js";

interface Key {
  priority: number;
  key: string;
  backlog: number;
  weight: string;
  share: string;
}

interface Config {
  url: string;
  shots: string;
  queue: string;
  /** The rows the page must show, in DescribeQueue's order. */
  keys: Key[];
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
    const queue = page.locator(`section[data-queue="${cfg.queue}"]`);
    await queue.locator("table.fairness-keys").waitFor();
    const rows = queue.locator("table.fairness-keys tbody tr[data-fairness-key]");
    const seen = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({
        priority: Number(tr.getAttribute("data-priority")),
        key: tr.getAttribute("data-fairness-key") ?? "",
        backlog: Number(tr.querySelector(".backlog")?.textContent),
        weight: tr.querySelector(".weight")?.textContent ?? "",
        share: tr.querySelector(".share")?.textContent ?? "",
      })),
    );
    assert.deepEqual(seen, cfg.keys);
    await shot(page, cfg.shots, "queues-fairness");
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
  console.log("ok");
}

main().catch((e) => {
  process.stderr.write(`fairness: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
