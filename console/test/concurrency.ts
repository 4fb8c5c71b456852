// Drives the run page's concurrency key (docs/semantics.md#run-concurrency)
// in headless Chromium against the weftd cmd/weftd/console_concurrency_test.go
// started: of two runs of a key with limit 1, the QUEUED one shows the key,
// 1/1 started and why it waits (as GetRun said it); the holder's page, in a
// second tab, shows the key at 1/1 and no wait, and a signal sent there ends
// it — then the first tab, left open, shows the queued run started, holding
// the slot, with no wait. Prints "ok" on its last line.
//
//   node console/test-dist/concurrency.mjs '<config JSON>'
import assert from "node:assert/strict";
import { confirm, launch, newPage, shot, waitText } from "./support/page.js";

interface Config {
  url: string;
  shots: string;
  /** The run holding the key's one slot, waiting for signal "go". */
  holderRun: string;
  /** The run QUEUED behind it, and why GetRun says it waits. */
  queuedRun: string;
  key: string;
  wait: string;
  plan: string;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;

const log = (m: string) => process.stderr.write(`concurrency: ${m}\n`);

async function main(): Promise<void> {
  const browser = await launch();
  const problems: string[] = [];
  const page = await newPage(browser, problems);
  try {
    log("the queued run shows its key, 1/1 started and why it waits");
    await page.goto(`${cfg.url}/ui/#/runs/${encodeURIComponent(cfg.queuedRun)}`);
    await waitText(page, "#run-status .badge", /^QUEUED$/);
    await waitText(page, "#concurrency-key", new RegExp(`^${cfg.key}$`));
    await waitText(page, "#concurrency-in-use", /^1\/1$/);
    await waitText(page, "#concurrency-strategy", /^queue$/);
    await waitText(page, "#concurrency-wait", new RegExp(`^${cfg.wait}$`));
    assert.match(cfg.wait, new RegExp(`concurrency key ${cfg.key} at 1/1`));
    await waitText(page, "#run-waiting", new RegExp(`Waiting on a slot: ${cfg.wait}`));
    await shot(page, cfg.shots, "concurrency-queued");

    log("the Queues page, in a second tab, lists the plan's key at 1/1 with one run queued");
    const holder = await page.context().newPage();
    await holder.goto(`${cfg.url}/ui/#/queues`);
    const row = holder.locator(`table.run-concurrency-keys tr[data-plan="${cfg.plan}"][data-run-key="${cfg.key}"]`);
    await row.waitFor();
    assert.equal((await row.locator(".in-use").textContent())?.trim(), "1/1");
    assert.equal((await row.locator(".queued").textContent())?.trim(), "1");
    await shot(holder, cfg.shots, "concurrency-queues");

    log("the holder, in that tab, shows the key at 1/1 and no wait; a signal ends it");
    await holder.goto(`${cfg.url}/ui/#/runs/${encodeURIComponent(cfg.holderRun)}`);
    await waitText(holder, "#run-status .badge", /^BLOCKED$/);
    await waitText(holder, "#concurrency-key", new RegExp(`^${cfg.key}$`));
    await waitText(holder, "#concurrency-in-use", /^1\/1$/);
    assert.equal(await holder.locator("#concurrency-wait").count(), 0, "a started run does not wait");
    await holder.locator("#act-signal").click();
    await confirm(holder, "Send", { "#sig-name": "go" });
    await waitText(holder, "#run-status .badge", /^COMPLETED$/);

    log("the first tab, left open, shows the queued run started with the slot and no wait");
    await waitText(page, "#run-status .badge", /^BLOCKED$/);
    await waitText(page, "#concurrency-in-use", /^1\/1$/);
    await page.locator("#concurrency-wait").waitFor({ state: "detached" });
    assert.equal(await page.locator("#run-waiting").filter({ hasText: /a slot/ }).count(), 0);
    await shot(page, cfg.shots, "concurrency-started");
    await holder.goto(`${cfg.url}/ui/#/queues`);
    await waitText(holder, `table.run-concurrency-keys tr[data-run-key="${cfg.key}"] .queued`, /^0$/);
    await waitText(holder, `table.run-concurrency-keys tr[data-run-key="${cfg.key}"] .in-use`, /^1\/1$/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
  console.log("ok");
}

main().catch((e) => {
  process.stderr.write(`concurrency: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
