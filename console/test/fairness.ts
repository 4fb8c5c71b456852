// Drives the console's Queues page's fairness keys (docs/semantics.md#fairness)
// in headless Chromium against the weftd cmd/weftd/console_fairness_test.go
// started, whose ready tasks carry fairness keys: per priority, each key's
// backlog, weight and share of the priority's claims, as DescribeQueue
// answered them; and a run whose step waits its fair turn says why.
// Prints "ok" on its last line.
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
  /** A run whose step waits its fair turn, and why, as GetRun said it. */
  waitingRun: string;
  wait: string;
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

    await page.goto(`${cfg.url}/ui/#/runs/${encodeURIComponent(cfg.waitingRun)}`);
    await waitText(page, "#step-flow-wait", new RegExp(`^${escape(cfg.wait)}$`));
    await waitText(page, "#run-waiting", new RegExp(`flow control \\(step render\\): ${escape(cfg.wait)}`));
    await shot(page, cfg.shots, "fairness-run");
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
  console.log("ok");
}

/** escape makes s a literal inside a RegExp. */
function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

main().catch((e) => {
  process.stderr.write(`fairness: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
