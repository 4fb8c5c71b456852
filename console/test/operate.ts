// Drives the console's start-a-run form and batch actions in headless
// Chromium against the weftd cmd/weftd/console_operate_test.go started, and
// prints what it did as JSON on its last line (the runs it started, the
// batch it ran), which the Go test checks through the API.
//
//   node console/test-dist/operate.mjs '<config JSON>'
import type { Page } from "playwright-core";
import { join } from "node:path";
import assert from "node:assert/strict";
import { launch, newPage, shot, waitText } from "./support/page.js";

interface Config {
  url: string;
  /** Stored in the registry in versions 1 and 2, each one step that waits for signal go. */
  plan: string;
  /** The plan of batchRuns; the first three are cancelled by a batch. */
  batchPlan: string;
  batchRuns: string[];
  shots: string;
  /** Whether this weftd serves run queries (search's engine); when not, a query is refused as unavailable (FAILED_PRECONDITION). */
  queryServed: boolean;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;
const log = (msg: string) => process.stderr.write(`operate: ${msg}\n`);

/** A pasted workflow whose second step's timeout is not a duration. */
const badYAML = `metadata:
  name: pasted
  version: "1"
spec:
  steps:
    - name: reserve
      waitForSignal: go
    - name: ship
      dependsOn: [reserve]
      waitForSignal: shipped
      timeout: soon
`;
const goodYAML = badYAML.replace("      timeout: soon\n", "");

/**
 * loseFirstAnswer lets the next call to url reach weftd and drops its
 * answer, as a network that fails after the send would; lost() then
 * answers the HTTP status weftd gave the call whose answer was dropped.
 */
async function loseFirstAnswer(page: Page, url: string): Promise<{ lost: () => number }> {
  let status = 0;
  await page.route(url, async (route) => {
    if (status !== 0) return route.continue();
    status = -1;
    status = (await route.fetch()).status(); // weftd acted on it
    await route.abort("connectionreset");
  });
  return { lost: () => status };
}

/** runIdOf answers the run the page shows, once it shows one. */
async function runIdOf(page: Page): Promise<string> {
  await page.waitForURL(/#\/runs\//);
  const id = decodeURIComponent(new URL(page.url()).hash.replace(/^#\/runs\//, ""));
  await waitText(page, "#run-id", new RegExp(id));
  return id;
}

async function main(): Promise<void> {
  const browser = await launch();
  const problems: string[] = [];
  const page = await newPage(browser, problems);
  let batchByQuery = false;
  try {
    await page.goto(`${cfg.url}/ui/`);
    await page.locator(`tr[data-run-id="${cfg.batchRuns[0]}"]`).waitFor();

    log("pasted YAML with a bad duration is refused beside the YAML, naming its YAML path");
    await page.locator("#start-run").click();
    await page.locator("#stored-definition").waitFor(); // the registry is the default source when it holds definitions
    await page.locator("#source-yaml").check();
    await page.locator("#start-yaml").fill(badYAML);
    await page.locator("#start-check").click();
    await waitText(page, "#yaml-fault .fault-code", /^INVALID_ARGUMENT$/);
    await waitText(page, "#yaml-fault .violations", /spec\.steps\[1\]\.timeout: yaml\.duration/);
    await waitText(page, "#yaml-where", /spec\.steps\[1\]\.timeout is on line 11/);
    await page.locator('#yaml-where button[data-line="11"]').click();
    const selected = await page.locator("#start-yaml").evaluate((t: HTMLTextAreaElement) => t.value.slice(t.selectionStart, t.selectionEnd));
    assert.equal(selected, "      timeout: soon", "the button selects the refused line");
    await shot(page, cfg.shots, "start-yaml-error");
    await page.locator("#start-submit").click(); // submitting asks weftd again and sends nothing
    await waitText(page, "#yaml-fault .violations", /spec\.steps\[1\]\.timeout/);
    assert.match(page.url(), /#\/start$/, "a refused definition opened a run");

    log("an input that is not JSON is shown at its line and column, and nothing can be sent");
    await page.locator("#start-yaml").fill(goodYAML);
    await page.locator("#start-check").click();
    await waitText(page, "#yaml-ok", /pasted@1, 2 steps/);
    assert.equal(await page.locator("#yaml-fault").count(), 0, "the fixed YAML's refusal is gone");
    await page.locator("#start-input").fill('{"order": "A-1001",\n "lines": }');
    await waitText(page, "#input-error", /line 2, column 11: expected a value/);
    assert.equal(await page.locator("#start-submit").isDisabled(), true, "submit is off while the input is not JSON");
    await page.locator("#input-error").scrollIntoViewIfNeeded();
    await shot(page, cfg.shots, "start-input-error");

    log("the fixed workflow runs with its input; the first answer is lost, and submitting again answers the same run");
    await page.locator("#start-input").fill('{"order": "A-1001"}');
    assert.equal(await page.locator("#input-error").count(), 0);
    const submitted = await loseFirstAnswer(page, "**/weft.v1.RunService/SubmitRun");
    await page.locator("#start-submit").click();
    await page.locator("#submit-fault .fault").waitFor(); // the lost answer, shown
    assert.equal(submitted.lost(), 200, "weftd accepted the submission whose answer was lost");
    await page.locator("#start-submit").click();
    const yamlRun = await runIdOf(page);
    await waitText(page, "#run-status .badge", /^BLOCKED/);
    await page.locator('svg.dag g.node[data-step="reserve"][data-status="WAITING_FOR_SIGNAL"]').waitFor();

    log("a run of a stored definition: the version picked, not the latest");
    await page.goto(`${cfg.url}/ui/#/start`);
    await page.locator("#start-plan").selectOption(cfg.plan);
    await page.locator("#start-version").selectOption("1");
    await waitText(page, "#stored-definition", /restock@1 · 1 step ·/);
    await waitText(page, "#stored-definition .def-steps", /wait-1\s*waits for signal go/);
    await shot(page, cfg.shots, "start-registry");
    await page.locator("#start-submit").click();
    const registryRun = await runIdOf(page);
    await page.locator('svg.dag g.node[data-step="wait-1"]').waitFor();

    log("a run submitted without start waits PENDING (the plan's latest)");
    await page.goto(`${cfg.url}/ui/#/start`);
    await page.locator("#start-plan").selectOption(cfg.plan);
    await waitText(page, "#stored-definition", /restock@2/);
    await page.locator("#start-now").uncheck();
    await page.getByRole("button", { name: "Submit", exact: true }).click();
    const pendingRun = await runIdOf(page);
    await waitText(page, "#run-status .badge", /^PENDING/);

    log("three runs selected in the list are cancelled by one batch, after a confirmation that counts them");
    await page.locator("a", { hasText: "Runs" }).first().click();
    await page.locator("#f-plan").fill(cfg.batchPlan);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForFunction((n) => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === n, cfg.batchRuns.length);
    for (const id of cfg.batchRuns.slice(0, 3)) await page.locator(`tr[data-run-id="${id}"] input.select-run`).check();
    await waitText(page, "#selected-count", /^3 runs selected$/);
    await page.locator("#batch-op").selectOption({ label: "cancel" });
    await shot(page, cfg.shots, "runs-selected");
    await page.locator("#batch-apply").click();
    await waitText(page, "dialog[open] #batch-count", /This batch touches 3 runs: it cancels each run/);
    await page.locator("dialog[open] #batch-reason").fill("nightly sweep");
    await shot(page, cfg.shots, "batch-confirm");
    // The first answer is lost: pressing again answers the batch the first press started.
    const started = await loseFirstAnswer(page, "**/weft.v1.RunService/StartBatch");
    await page.locator("dialog[open]").getByRole("button", { name: "Cancel 3 runs", exact: true }).click();
    await page.locator("dialog[open] .fault").waitFor();
    assert.equal(started.lost(), 200, "weftd started the batch whose answer was lost");
    await page.locator("dialog[open]").getByRole("button", { name: "Cancel 3 runs", exact: true }).click();
    await page.waitForURL(/#\/batches\//);
    const batch = decodeURIComponent(new URL(page.url()).hash.replace(/^#\/batches\//, ""));
    await waitText(page, "#batch-state .badge", /^COMPLETED$/);
    await waitText(page, "#batch-counts", /^3 of 3 done · 3 succeeded · 0 failed · 0 skipped$/);
    await page.waitForFunction(() => document.querySelectorAll('table.batch-runs tr[data-outcome="SUCCEEDED"]').length === 3);
    for (const id of cfg.batchRuns.slice(0, 3)) assert.equal(await page.locator(`table.batch-runs tr[data-run-id="${id}"]`).count(), 1, id);
    await shot(page, cfg.shots, "batch-done");
    await page.locator("nav").getByRole("link", { name: "Batches" }).click();
    await waitText(page, `tr[data-batch-id="${batch}"]`, /cancel\s*COMPLETED\s*3 of 3 · 0 failed\s*anonymous/);
    assert.equal(await page.locator("table.batches tbody tr[data-batch-id]").count(), 1, "one batch, though confirmed twice");
    await shot(page, cfg.shots, "batches");
    await page.locator(`tr[data-batch-id="${batch}"] a`).click();
    await waitText(page, "#batch-state .badge", /^COMPLETED$/);
    await page.locator(`table.batch-runs tr[data-run-id="${cfg.batchRuns[0]}"] a`).click();
    await waitText(page, "#run-status .badge", /^CANCELLED/);

    log("a view saved for the tenant is listed and reopens its filters, from the picker and from a link");
    await page.locator("a", { hasText: "Runs" }).first().click();
    await page.locator("#f-plan").fill(cfg.batchPlan);
    await page.locator("#f-status").selectOption({ label: "CANCELLED" });
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === 3);
    await page.locator("#view-save").click();
    await waitText(page, "dialog[open] #view-keeps", /status CANCELLED · plan nightly-sweep/);
    await page.locator("dialog[open] #view-name").fill("cancelled sweeps");
    await shot(page, cfg.shots, "view-save");
    await page.locator("dialog[open]").getByRole("button", { name: "Save view", exact: true }).click();
    await waitText(page, "#view-done", /View cancelled sweeps saved: everyone in the tenant sees it/);
    await page.getByRole("button", { name: "Clear", exact: true }).click();
    await page.waitForFunction((n) => document.querySelectorAll("table.runs tbody tr[data-run-id]").length > n, 3);
    await page.locator("#view-pick").selectOption("cancelled sweeps");
    await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === 3);
    assert.equal(await page.locator("#f-plan").inputValue(), cfg.batchPlan);
    assert.equal(await page.locator("#f-status option:checked").textContent(), "CANCELLED");
    for (const id of cfg.batchRuns.slice(0, 3)) await page.locator(`tr[data-run-id="${id}"]`).waitFor();
    await waitText(page, "#view-about", /saved by anonymous/);
    assert.match(page.url(), /#\/\?view=cancelled%20sweeps$/, "the page's address opens the view");
    await shot(page, cfg.shots, "views");
    const other = await newPage(browser, problems);
    await other.goto(`${cfg.url}/ui/#/?view=${encodeURIComponent("cancelled sweeps")}`);
    await other.waitForFunction(() => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === 3);
    assert.equal(await other.locator("#f-plan").inputValue(), cfg.batchPlan, "a link opens the view in another tab");
    await other.close();

    log("a view saved again under its name is replaced; a deleted view is gone");
    await page.locator("#f-status").selectOption({ label: "BLOCKED" });
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === 1);
    await page.locator("#view-save").click();
    await page.locator("dialog[open] #view-name").fill("blocked sweeps");
    await page.locator("dialog[open]").getByRole("button", { name: "Save view", exact: true }).click();
    await waitText(page, "#view-done", /View blocked sweeps saved/);
    await page.locator("#view-save").click();
    assert.equal(await page.locator("dialog[open] #view-name").inputValue(), "blocked sweeps", "the open view's name");
    await page.locator("dialog[open]").getByRole("button", { name: "Save view", exact: true }).click();
    await waitText(page, "#view-done", /View blocked sweeps replaced/);
    assert.equal(await page.locator("#view-pick option", { hasText: "blocked sweeps" }).count(), 1, "one view of the name");
    await page.locator("#view-delete").click();
    await page.locator("dialog[open]").getByRole("button", { name: "Delete view", exact: true }).click();
    await waitText(page, "#view-done", /View blocked sweeps deleted/);
    assert.equal(await page.locator("#view-pick option", { hasText: "blocked sweeps" }).count(), 0);

    log("a query weftd refuses is shown under the query box");
    await page.getByRole("button", { name: "Clear", exact: true }).click();
    const badQuery = 'status = "FAILED" AND plan =';
    await page.locator("#f-query").fill(badQuery);
    await page.getByRole("button", { name: "Apply" }).click();
    if (cfg.queryServed) {
      await waitText(page, "#query-error .fault-code", /^INVALID_ARGUMENT$/);
      const where = (await page.locator("#query-where").textContent()) ?? "";
      const [line, caret] = where.split("\n");
      assert.equal(line, badQuery);
      const column = Number(/column (\d+)/.exec((await page.locator("#query-error .fault-message").textContent()) ?? "")?.[1]);
      assert.equal(column, badQuery.length + 1, "weftd names the column just past the end");
      assert.equal(caret, `${" ".repeat(column - 1)}^`, "the caret is under the column weftd names");
    } else {
      // This weftd has no query engine yet: the refusal is still the query's, under the box.
      await waitText(page, "#query-error .fault-code", /^(CAPABILITY_UNAVAILABLE|FAILED_PRECONDITION)$/);
      await waitText(page, "#query-error .fault-message", /run queries/);
    }
    assert.equal(await page.locator("#f-query[aria-invalid=true]").count(), 1);
    await shot(page, cfg.shots, "query-error");
    if (!cfg.queryServed) {
      await page.locator("#select-matching").click();
      await waitText(page, ".fault-code", /^(CAPABILITY_UNAVAILABLE|FAILED_PRECONDITION)$/); // CountRuns
    } else {
      log("every run matching the query and the filters is paused by one batch that selects them by the query");
      await page.locator("#f-query").fill('plan = "' + cfg.batchPlan + '"');
      await page.locator("#f-plan").fill(cfg.batchPlan);
      await page.locator("#f-status").selectOption({ label: "BLOCKED" });
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === 1);
      assert.equal(await page.locator("#query-error").count(), 0, "the fixed query's refusal is gone");
      await page.locator("#select-matching").click();
      await waitText(page, "#selected-count", /^All 1 run matching the filters$/);
      await page.locator("#batch-op").selectOption({ label: "pause" });
      await page.locator("#batch-apply").click();
      await waitText(page, "dialog[open] #batch-count", /This batch touches 1 run \(every run matching the filters when it starts\): it pauses each run/);
      await waitText(page, "dialog[open] #batch-query", /^\(plan = "nightly-sweep"\) AND status = "BLOCKED" AND plan = "nightly-sweep"$/);
      await page.locator("dialog[open]").getByRole("button", { name: "Pause 1 run", exact: true }).click();
      await page.locator("#batch-state .badge, dialog[open] .fault").first().waitFor();
      if (await page.locator("dialog[open] .fault").count()) {
        // This weftd lists by query but its batches do not select by one yet: the refusal names query, in the dialog.
        await waitText(page, "dialog[open] .violations", /query: query\.unavailable/);
        await page.locator("dialog[open]").getByRole("button", { name: "Close" }).click();
      } else {
        batchByQuery = true;
        await waitText(page, "#batch-state .badge", /^COMPLETED$/);
        await waitText(page, "#batch-counts", /^1 of 1 done · 1 succeeded/);
        await page.locator(`table.batch-runs tr[data-run-id="${cfg.batchRuns[3]}"][data-outcome="SUCCEEDED"]`).waitFor();
        await waitText(page, "#batch-what", /Pause 1 run matching/);
      }
    }

    // weftd's refusals of the bad YAML are 400 answers the browser logs; every other problem counts.
    assert.deepEqual(problems.filter((p) => !/status of (400|501|503)|net::ERR_CONNECTION_RESET/.test(p)), [], "the browser reported problems");
    process.stdout.write(`${JSON.stringify({ yamlRun, registryRun, pendingRun, batch, batchByQuery })}\n`);
    log("all scenarios passed");
  } catch (e) {
    if (problems.length > 0) log(`browser problems: ${problems.join(" | ")}`);
    if (!page.isClosed()) await page.screenshot({ path: join(cfg.shots, "operate-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await browser.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`operate: FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
