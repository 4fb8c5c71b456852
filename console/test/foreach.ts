// Drives the run page's forEach groups (docs/semantics.md#for-each) in
// headless Chromium against the weftd cmd/weftd/console_foreach_test.go
// started:
//   - a fan-out of 30 sub-workflow items whose item 12's child failed: one
//     graph node with its progress, the group collapsed with the progress
//     GetRun answered, expanded to its items in index order, filtered to the
//     failed one, opened like any step, and its child run followed there and
//     back; the forEach step its `when` skipped says "skipped: condition";
//   - a fan-out of 1,000 items: collapsed by default (no item drawn), one
//     graph node, pages of 50 in index order, filtered to the pending ones,
//     the in-flight ones saying why they wait (their fair turn).
// Prints "ok" on its last line.
//
//   node console/test-dist/foreach.mjs '<config JSON>'
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launch, newPage, shot, waitText } from "./support/page.js";

interface Counts {
  succeeded: number;
  inFlight: number;
  failed: number;
  pending: number;
  cancelled: number;
}

interface Config {
  url: string;
  shots: string;
  /** The 30-item fan-out over a sub-workflow, ended: its step, its progress line and counts as GetRun answered. */
  fanRun: string;
  fanStep: string;
  fanItems: number;
  fanProgress: string;
  fanCounts: Counts;
  /** The forEach step the run's `when` skipped. */
  skippedStep: string;
  /** The item that failed, and its child run. */
  failedItem: string;
  failedChild: string;
  /** The 1,000-item fan-out no worker runs: its step and progress line. */
  bigRun: string;
  bigStep: string;
  bigItems: number;
  bigProgress: string;
  bigPending: number;
  bigInFlight: number;
  /** How many of its items wait their fair turn, and why the second one does. */
  bigHeld: number;
  bigWait: string;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;

const log = (m: string) => process.stderr.write(`foreach: ${m}\n`);

/** itemIds answers the item ids of the rows a group shows, in order. */
async function itemIds(page: Page, step: string): Promise<string[]> {
  return page.locator(`section[data-fanout="${step}"] tr[data-item]`).evaluateAll((rows) => rows.map((r) => r.getAttribute("data-item") ?? ""));
}

async function openRun(page: Page, run: string): Promise<void> {
  await page.goto(`${cfg.url}/ui/#/runs/${encodeURIComponent(run)}`);
  await waitText(page, "#run-id", new RegExp(run));
}

async function main(): Promise<void> {
  const browser = await launch();
  const problems: string[] = [];
  const page = await newPage(browser, problems);
  try {
    log("the 30-item fan-out is one graph node and one collapsed group with GetRun's progress");
    await openRun(page, cfg.fanRun);
    const group = page.locator(`section[data-fanout="${cfg.fanStep}"]`);
    await waitText(page, `section[data-fanout="${cfg.fanStep}"] .fanout-progress`, new RegExp(`^${escape(cfg.fanProgress)}$`));
    const node = page.locator(`svg.dag g.node[data-step="${cfg.fanStep}"]`);
    assert.equal(await node.getAttribute("data-progress"), `${cfg.fanCounts.succeeded}/${cfg.fanItems}`);
    assert.equal((await node.locator(".node-status").textContent())?.trim(), `FAILED · ${cfg.fanCounts.succeeded}/${cfg.fanItems} · 1 failed`);
    assert.equal(await page.locator("svg.dag g.node").count(), 2, "one node per action, none per item");
    assert.equal(await group.locator("tr[data-item]").count(), 0, "a group starts collapsed");
    assert.equal(await page.locator("#run-children li").count(), 1, "the items' child runs are counted, not listed");
    await waitText(page, `#run-item-children-${cfg.fanStep}`, /one per item/);

    log("the forEach step its when skipped says skipped: condition, in the graph and its group");
    await page.locator(`svg.dag g.node[data-step="${cfg.skippedStep}"][data-status="SKIPPED"][data-reason="condition"]`).waitFor();
    await waitText(page, `svg.dag g.node[data-step="${cfg.skippedStep}"] .node-status`, /^SKIPPED · CONDITION$/);
    await waitText(page, `section[data-fanout="${cfg.skippedStep}"] .fanout-progress`, /^skipped: condition/);
    await shot(page, cfg.shots, "foreach-collapsed");

    log("the event log keeps the items' events, or the step's own, and builds an event's JSON once opened");
    await page.locator("#log-step").selectOption(`items:${cfg.fanStep}`);
    const steps = await page.locator("table.events tbody tr td:nth-child(4)").allTextContents();
    assert.ok(steps.length > cfg.fanItems && steps.every((s) => s.startsWith(`${cfg.fanStep}[`)), "only the items' events");
    await page.locator("#log-step").selectOption(cfg.fanStep);
    const fanned = page.locator("table.events tbody tr").filter({ hasText: "StepFannedOut" });
    await waitText(page, "table.events tbody tr summary", new RegExp(`^fanned out over ${cfg.fanItems} items, at most 5 at once$`));
    assert.equal(await page.locator("table.events pre.json").count(), 0, "no JSON built before Details open");
    await fanned.locator("summary").click();
    await waitText(page, "table.events pre.json", /"itemCount": 30/);
    await page.locator("#log-step").selectOption("");

    log("expanded: every item in index order, the filters counting each state");
    await group.locator(".fanout-toggle").click();
    const all = Array.from({ length: cfg.fanItems }, (_, i) => `${cfg.fanStep}[${i}]`);
    assert.deepEqual(await itemIds(page, cfg.fanStep), all);
    for (const [state, n] of Object.entries(cfg.fanCounts)) {
      assert.equal((await group.locator(`button[data-filter="${state}"] .count-n`).textContent())?.trim(), String(n), `the ${state} filter's count`);
    }
    await waitText(page, `section[data-fanout="${cfg.fanStep}"] .fanout-range`, new RegExp(`^items 1–${cfg.fanItems} of ${cfg.fanItems} · page 1 of 1$`));
    await shot(page, cfg.shots, "foreach-expanded");

    log("filtered to the failed item; it opens like any step; its child run is followed there and back");
    await group.locator('button[data-filter="failed"]').click();
    assert.deepEqual(await itemIds(page, cfg.fanStep), [cfg.failedItem]);
    const row = group.locator(`tr[data-item="${cfg.failedItem}"]`);
    assert.equal(await row.getAttribute("data-status"), "FAILED");
    assert.match((await row.locator(".item-error").textContent()) ?? "", /VALIDATION/);
    await group.locator('button[data-filter="succeeded"]').click();
    assert.equal((await itemIds(page, cfg.fanStep)).length, cfg.fanCounts.succeeded);
    await group.locator('button[data-filter="failed"]').click();
    await row.locator(".item-open").click();
    await waitText(page, "#step-title", new RegExp(`Item ${escape(cfg.failedItem)}\\s*FAILED`));
    await waitText(page, "#item-of", new RegExp(`Item ${cfg.failedItem.replace(/.*\[(\d+)\]$/, "$1")} of forEach step ${cfg.fanStep}`));
    assert.equal(await page.locator("#step-panel #act-retry, #step-panel #act-skip, #step-panel #act-rerun").count(), 0, "no control names an item");
    await waitText(page, "#step-panel table.attempts", /FAILED/);
    await waitText(page, "#step-child", new RegExp(cfg.failedChild));
    await shot(page, cfg.shots, "foreach-item");
    await row.locator(".item-child").click();
    await page.waitForURL(new RegExp(`#/runs/${encodeURIComponent(cfg.failedChild)}$`));
    await waitText(page, "#run-id", new RegExp(cfg.failedChild));
    await waitText(page, "#run-parent", new RegExp(`${cfg.fanRun}.*${escape(cfg.failedItem)}`));
    await page.locator("#run-parent-link").click();
    await waitText(page, "#run-id", new RegExp(cfg.fanRun));
    assert.equal(await page.locator(`section[data-fanout="${cfg.fanStep}"] tr[data-item]`).count(), 0, "collapsed again on a fresh page");

    log("the 1,000-item fan-out stays collapsed, one node, and pages of 50 in index order");
    await openRun(page, cfg.bigRun);
    const big = page.locator(`section[data-fanout="${cfg.bigStep}"]`);
    await waitText(page, `section[data-fanout="${cfg.bigStep}"] .fanout-progress`, new RegExp(`^${escape(cfg.bigProgress)}$`));
    assert.equal(await page.locator("svg.dag g.node").count(), 1);
    assert.equal(await page.locator(`svg.dag g.node[data-step="${cfg.bigStep}"]`).getAttribute("data-progress"), `0/${cfg.bigItems}`);
    assert.equal(await page.locator("[data-item]").count(), 0, "no item drawn while collapsed");
    assert.equal(await page.locator(`svg.timeline g[data-step*="["]`).count(), 0, "no timeline lane per item");
    await waitText(page, "#step-title", new RegExp(`^Step ${cfg.bigStep}\\s*RUNNING`));
    await waitText(page, "#step-logical-attempt", /^1$/);
    await waitText(page, "#step-fanout", new RegExp(`^${escape(cfg.bigProgress)}$`));
    await shot(page, cfg.shots, "foreach-big-collapsed");
    await big.locator(".fanout-toggle").click();
    const first = Array.from({ length: 50 }, (_, i) => `${cfg.bigStep}[${i}]`);
    assert.deepEqual(await itemIds(page, cfg.bigStep), first);
    await waitText(page, `section[data-fanout="${cfg.bigStep}"] .fanout-range`, new RegExp(`^items 1–50 of ${cfg.bigItems} · page 1 of ${cfg.bigItems / 50}$`));
    assert.equal(await big.locator(".fanout-prev").isDisabled(), true);
    await big.locator(".fanout-next").click();
    assert.deepEqual(await itemIds(page, cfg.bigStep), Array.from({ length: 50 }, (_, i) => `${cfg.bigStep}[${50 + i}]`));
    await waitText(page, `section[data-fanout="${cfg.bigStep}"] .fanout-range`, /^items 51–100 of 1000 · page 2 of 20$/);

    log("filtered to the pending items: the first page starts after the ones in flight, a page back to the first");
    await big.locator('button[data-filter="pending"]').click();
    await waitText(page, `section[data-fanout="${cfg.bigStep}"] .fanout-range`, new RegExp(`^items 1–50 of ${cfg.bigPending} pending · page 1 of ${Math.ceil(cfg.bigPending / 50)}$`));
    const pending = await itemIds(page, cfg.bigStep);
    assert.equal(pending.length, 50);
    assert.equal(pending[0], `${cfg.bigStep}[${cfg.bigInFlight}]`, "items are dispatched in index order");
    for (let i = 0; i < 19 && !(await big.locator(".fanout-next").isDisabled()); i++) await big.locator(".fanout-next").click();
    await waitText(page, `section[data-fanout="${cfg.bigStep}"] .fanout-range`, new RegExp(`of ${cfg.bigPending} pending · page ${Math.ceil(cfg.bigPending / 50)} of`));
    assert.deepEqual((await itemIds(page, cfg.bigStep)).slice(-1), [`${cfg.bigStep}[${cfg.bigItems - 1}]`]);
    await big.locator('button[data-filter="inFlight"]').click();
    assert.equal((await itemIds(page, cfg.bigStep)).length, cfg.bigInFlight);
    assert.equal((await big.locator(`tr[data-item="${cfg.bigStep}[1]"] .item-wait`).textContent())?.trim(), cfg.bigWait);
    assert.equal(await big.locator(`tr[data-item="${cfg.bigStep}[0]"] .item-wait`).count(), 0, "the oldest is next");
    await waitText(page, "#run-waiting", new RegExp(`flow control \\(${cfg.bigHeld} items of step ${cfg.bigStep}\\): ${escape(cfg.bigWait)}`));
    await shot(page, cfg.shots, "foreach-big-in-flight");
    if (cfg.shots) {
      await page.emulateMedia({ colorScheme: "dark" });
      await shot(page, cfg.shots, "foreach-big-dark");
    }
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
  process.stderr.write(`foreach: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
