// Drives the console in headless Chromium (Debian's, through playwright-core)
// against a real weftd and worker that cmd/weftd/console_test.go started. It
// clicks through every scenario and throws (exit 1) at the first that does not
// hold; the Go test then checks the runs' state through the API.
//
//   node console/test-dist/e2e.mjs '<config JSON>'
import type { Browser, Page } from "playwright-core";
import { join } from "node:path";
import { confirm, launch, newPage, shot, waitText } from "./support/page.js";
import assert from "node:assert/strict";

/** What the Go test hands over. */
interface Config {
  /** "all" (the default) or "cluster": clusterURL is one weftd of a cluster, clusterRun submitted through another. */
  scenario?: "all" | "cluster";
  clusterURL: string;
  clusterRun: string;
  /** weftd with --auth-tokens. */
  authURL: string;
  /** Tenant acme's token, tenant beta's token, and one weftd refuses. */
  acmeToken: string;
  /** Another principal of tenant acme, who may complete alice's manual steps. */
  carolToken: string;
  betaToken: string;
  wrongToken: string;
  /** acme's runs of examples/workflow.yaml: one to finish, one to pause and resume, one to cancel. */
  mainRun: string;
  pauseRun: string;
  cancelRun: string;
  /** acme's DAG run whose bad-reserve step fails for good and holds the run. */
  holdRun: string;
  /** acme's run that fails after a step with a compensation hook succeeded. */
  rollbackRun: string;
  /** acme's run whose first step runs until releaseURL is fetched. */
  drainRun: string;
  /** A run with a step its condition skipped and a sleeping step. */
  stepsRun: string;
  releaseURL: string;
  /** Fetching it lets the proxy in front of weftd answer the ResyncRun calls it holds. */
  resyncURL: string;
  /** beta's run. */
  betaRun: string;
  /** The run's submitter, whom separation of duties refuses as the completer. */
  submitter: string;
  /** weftd without tokens (loopback), and a run on it. */
  openURL: string;
  openRun: string;
  /** Where screenshots go. */
  shots: string;
  /** acme's run whose reserve step succeeded and that waits: cancelled with compensation. */
  compensateRun: string;
  /** acme's schedule, and the run its trigger started. */
  schedule: string;
  scheduleRun: string;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;
const log = (msg: string) => process.stderr.write(`e2e: ${msg}\n`);

async function signIn(page: Page, token: string): Promise<void> {
  await page.locator("#token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** confirm fills a dialog's fields and presses its confirming button. */
async function runStatus(page: Page, re: RegExp): Promise<void> {
  await waitText(page, "#run-status .badge", re);
}

async function openRunFromList(page: Page, runId: string): Promise<void> {
  await page.locator("a", { hasText: "Runs" }).first().click();
  const row = page.locator(`tr[data-run-id="${runId}"]`);
  await row.waitFor();
  await row.getByRole("link").click();
  await waitText(page, "#run-id", new RegExp(runId));
}

/** cluster: a weftd of a cluster shows a run submitted through another, and a signal sent from it finishes the run. */
async function cluster(browser: Browser, problems: string[]): Promise<void> {
  const page = await newPage(browser, problems);
  log("any weftd of a cluster shows a run submitted through another and acts on it");
  await page.goto(`${cfg.clusterURL}/ui/`);
  await page.locator(`tr[data-run-id="${cfg.clusterRun}"]`).waitFor();
  await openRunFromList(page, cfg.clusterRun);
  await page.locator('svg.dag g.node[data-step="wait"][data-status="WAITING_FOR_SIGNAL"]').waitFor();
  await page.locator("#act-signal").click();
  await confirm(page, "Send", { "#sig-name": "go", "#sig-payload": '{"from": "the console"}' });
  await runStatus(page, /^COMPLETED/);
  await waitText(page, "#feed-state", /FINAL/);
  await waitText(page, "table.events", /RunCompleted/);
}

async function main(): Promise<void> {
  const browser = await launch();
  const problems: string[] = [];
  let current: Page | undefined;
  try {
    if (cfg.scenario === "cluster") {
      await cluster(browser, problems);
      assert.deepEqual(problems, [], "the browser reported problems");
      log("all scenarios passed");
      return;
    }
    const page = await newPage(browser, problems);
    current = page;

    log("a wrong token is refused");
    await page.goto(`${cfg.authURL}/ui/`);
    await page.locator("#token").waitFor();
    await signIn(page, cfg.wrongToken);
    await waitText(page, ".refused", /The token was refused/);
    await waitText(page, "#token-refused", /unknown bearer token/);
    assert.equal(await page.locator("table.runs").count(), 0, "the runs list showed behind a refused token");
    await shot(page, cfg.shots, "signin-refused");

    log("the list shows a submitted run");
    await signIn(page, cfg.acmeToken);
    await page.locator(`tr[data-run-id="${cfg.mainRun}"]`).waitFor();
    await waitText(page, `tr[data-run-id="${cfg.mainRun}"] .badge`, /BLOCKED/);
    log("the list says why each run waits: a signal's name, a step held on failure");
    await waitText(page, `tr[data-run-id="${cfg.mainRun}"] td.waiting`, /signal payment-confirmed \(step payment-confirmed\)/);
    await waitText(page, `tr[data-run-id="${cfg.holdRun}"] td.waiting`, /held on failure of bad-reserve/);
    assert.equal(await page.evaluate(() => sessionStorage.length + localStorage.length), 0, "the page keeps no token: weftd's session does");
    assert.equal(await page.evaluate(() => document.cookie), "", "the session cookie is HttpOnly");
    await page.locator("#f-search").fill(cfg.mainRun.slice(-12));
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr[data-run-id]").length === 1);
    await page.getByRole("button", { name: "Clear" }).click();
    await page.locator(`tr[data-run-id="${cfg.pauseRun}"]`).waitFor();
    await waitText(page, 'button.count:not([data-status]) .count-n', /^9$/);
    await shot(page, cfg.shots, "runs");

    log("a run page shows its DAG and timeline");
    await openRunFromList(page, cfg.mainRun);
    await page.waitForFunction(() => document.querySelectorAll("svg.dag g.node").length === 5);
    assert.equal(await page.locator("svg.dag polyline.edge").count(), 4, "four dependencies drawn");
    await page.locator('svg.dag g.node[data-step="payment-confirmed"][data-status="WAITING_FOR_SIGNAL"]').waitFor();
    await page.locator('svg.timeline g[data-step="charge"] g.bar[data-outcome="SUCCEEDED"]').waitFor();
    assert.equal(await page.locator('svg.timeline g[data-step="reserve"] g.bar').count(), 1, "reserve's one attempt");
    await waitText(page, "#feed-state", /LIVE/);

    log("the header says what the run waits for; engine events are the engine's");
    await waitText(page, "#run-waiting", /signal payment-confirmed \(step payment-confirmed\)/);
    await waitText(page, "table.events tr", /StepScheduled\s*[^\n]*engine/);
    log("the signal dialog offers the name the step waits for and warns of one no step waits for");
    await page.locator("#act-signal").click();
    await page.locator("dialog[open] #sig-name").waitFor();
    assert.equal(await page.locator("dialog[open] #sig-name").inputValue(), "payment-confirmed", "the waiting name is filled in");
    await waitText(page, "dialog[open] #sig-known", /payment-confirmed/);
    await page.locator("dialog[open] #sig-name").fill("payment-confirmd");
    await waitText(page, "dialog[open] #sig-unknown", /No step of this run waits for a signal named payment-confirmd/);
    await shot(page, cfg.shots, "signal-dialog");
    await page.locator("dialog[open]").getByRole("button", { name: "Close" }).click();

    log("a signal with a <script> payload is sent and shown as text");
    const hostile = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
    await page.locator("#act-signal").click();
    await confirm(page, "Send", { "#sig-name": "payment-confirmed", "#sig-payload": "{not json" });
    await waitText(page, "dialog[open] .fault", /INVALID_ARGUMENT\s*payload must be JSON/);
    await confirm(page, "Send", { "#sig-name": "payment-confirmed", "#sig-payload": JSON.stringify({ reference: hostile }), "#sig-id": "console-e2e-1" });
    await waitText(page, ".accepted", /Signal payment-confirmed accepted \(signal id console-e2e-1\)/);
    await page.locator('svg.dag g.node[data-step="approve-shipment"][data-status="WAITING_FOR_MANUAL_COMPLETION"]').waitFor();
    await page.locator('svg.dag g.node[data-step="payment-confirmed"]').click();
    await waitText(page, "#step-output", /<script>window.__pwned=1<\/script>/);
    assert.equal(await page.locator("#step-output script, #step-output img").count(), 0, "the payload became elements");
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, "the payload ran");
    await waitText(page, "table.signals tr.sig-accepted", /console-e2e-1/);
    await waitText(page, "table.events", /SignalConsumed/);

    log("a manual step is completed by clicking; a refused completion shows its fault");
    await page.locator('svg.dag g.node[data-step="approve-shipment"]').click();
    await page.locator("#completion-token").waitFor();
    const token = (await page.locator("#completion-token").textContent())?.trim() ?? "";
    assert.match(token, /^[0-9a-f]{16,}$/);
    await shot(page, cfg.shots, "run-waiting");
    await page.locator("#act-complete").click();
    await waitText(page, "dialog[open]", new RegExp(token));
    await confirm(page, "Complete", { "#mc-actor": cfg.submitter, "#mc-notes": "stock checked" });
    await waitText(page, "dialog[open] .fault-code", /^PERMISSION_DENIED$/);
    await waitText(page, "dialog[open] .fault-correlation", /[0-9a-f-]{36}/);
    await page.locator("dialog[open]").getByRole("button", { name: "Close" }).click();
    // Separation of duties is decided on the signed-in principal: carol completes it.
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(page, cfg.carolToken);
    await openRunFromList(page, cfg.mainRun);
    await page.locator('svg.dag g.node[data-step="approve-shipment"]').click();
    await page.locator("#act-complete").click();
    await confirm(page, "Complete", { "#mc-actor": "carol", "#mc-outcome": "1", "#mc-notes": "stock checked" });
    await runStatus(page, /^COMPLETED/);
    await page.locator('svg.dag g.node[data-step="ship"][data-status="SUCCEEDED"]').waitFor();
    await page.locator('svg.timeline g[data-step="ship"] g.bar[data-outcome="SUCCEEDED"]').waitFor();
    await waitText(page, "table.signals", /MANUAL_COMPLETION/);
    await waitText(page, "table.events", /RunCompleted/);
    await page.locator('svg.dag g.node[data-step="ship"]').click();
    await waitText(page, "#step-output", /tracking/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, cfg.shots, "run-completed");
    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, cfg.shots, "run-completed-dark");
    await page.emulateMedia({ colorScheme: "light" });

    log("a failed step held by the run is retried, then skipped, from the console");
    await openRunFromList(page, cfg.holdRun);
    await page.waitForFunction(() => document.querySelectorAll("svg.dag g.node").length === 4);
    assert.equal(await page.locator("svg.dag polyline.edge").count(), 3, "the DAG's three dependencies");
    await page.locator('svg.dag g.node[data-step="bad-reserve"][data-status="FAILED"]').waitFor();
    await runStatus(page, /^BLOCKED/);
    await waitText(page, "#run-waiting", /held on failure of bad-reserve \(Retry step or Skip step\)/);
    await page.locator('svg.dag g.node[data-step="bad-reserve"]').focus();
    await page.keyboard.press("Enter");
    await waitText(page, "#step-panel", /VALIDATION/);
    await page.locator("#act-retry").click();
    await confirm(page, "Retry", { "#act-reason": "try once more" });
    await page.waitForFunction(() => document.querySelectorAll('svg.timeline g[data-step="bad-reserve"] g.bar[data-outcome="FAILED"]').length === 2);
    await page.locator('svg.dag g.node[data-step="bad-reserve"][data-status="FAILED"]').waitFor();
    await waitText(page, "table.events", /StepRetried/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, cfg.shots, "run-held");
    await page.screenshot({ path: join(cfg.shots, "run-held-full.png"), fullPage: true });
    await page.locator("#act-skip").click();
    await confirm(page, "Skip", { "#act-reason": "stock counted by hand" });
    await page.locator('svg.dag g.node[data-step="bad-reserve"][data-status="SKIPPED"]').waitFor();
    await runStatus(page, /^COMPLETED/);

    log("an ended run is rerun from a step on its run page: the step runs again, in the same run");
    await page.locator('svg.dag g.node[data-step="bad-reserve"]').click();
    await page.locator("#act-rerun").click();
    await page.locator("dialog[open] #rerun-note").waitFor();
    await shot(page, cfg.shots, "rerun-confirm");
    await confirm(page, "Rerun", { "#act-reason": "stock feed fixed" });
    await waitText(page, "table.events", /RunRerun/);
    await runStatus(page, /^BLOCKED/); // bad-reserve fails again, and the run holds on it
    await page.waitForFunction(() => document.querySelectorAll('svg.timeline g[data-step="bad-reserve"] g.bar[data-outcome="FAILED"]').length === 3);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, cfg.shots, "run-rerun");

    log("a failed run shows its compensation outcome and each step's compensation");
    await openRunFromList(page, cfg.rollbackRun);
    await runStatus(page, /^FAILED/);
    await waitText(page, "#compensation", /^ROLLED_BACK$/);
    await waitText(page, ".run-header .run-error", /bad-reserve/);
    await page.locator('svg.dag g.node[data-step="reserve"]').click();
    await waitText(page, "#step-panel", /Compensation\s*SUCCEEDED/);
    await waitText(page, "table.events", /CompensationSucceeded/);

    log("a step its condition skipped says so, and a sleeping step shows its wake time");
    await openRunFromList(page, cfg.stepsRun);
    await waitText(page, "#run-waiting", /sleep of step cool-off until .* \(it wakes by itself\)/);
    await page.locator('svg.dag g.node[data-step="gift-wrap"][data-status="SKIPPED"][data-reason="condition"]').waitFor();
    await waitText(page, 'svg.dag g.node[data-step="gift-wrap"] .node-status', /SKIPPED · CONDITION/);
    await page.locator('svg.dag g.node[data-step="gift-wrap"]').click();
    await waitText(page, "#step-reason", /^Skipped by condition: when input\.giftWrap was false$/);
    await waitText(page, 'svg.dag g.node[data-step="cool-off"] .node-status', /^SLEEPING$/);
    await page.locator('svg.dag g.node[data-step="cool-off"]').click();
    await waitText(page, "#step-panel", /sleeps 1 h 0 min/);
    await waitText(page, "#step-wake", /\d/);
    await waitText(page, "table.events", /StepSleeping/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, cfg.shots, "run-condition-and-sleep");

    log("pause and resume take effect");
    await openRunFromList(page, cfg.pauseRun);
    await runStatus(page, /^BLOCKED/);
    await page.locator("#act-pause").click();
    await confirm(page, "Pause", { "#act-reason": "console test" });
    await runStatus(page, /^PAUSED/);
    await waitText(page, "table.events", /RunPaused/);
    await page.locator("#act-resume").click();
    await confirm(page, "Resume");
    await runStatus(page, /^BLOCKED/);
    await waitText(page, "table.events", /RunResumed/);

    log("a pause with a task in flight shows DRAINING and its count until the task ends");
    await openRunFromList(page, cfg.drainRun);
    await page.locator('svg.dag g.node[data-step="slow"][data-status="RUNNING"]').waitFor();
    await page.locator("#act-pause").click();
    await confirm(page, "Pause");
    await runStatus(page, /^PAUSED · DRAINING \(1 in flight\)$/);
    log("a gap in run_seq shows STALE until a resync moves the watermark past it");
    await waitText(page, "#feed-state", /^STALE · resyncing$/);
    await shot(page, cfg.shots, "run-stale");
    assert.equal((await fetch(cfg.resyncURL)).status, 200);
    await waitText(page, "#feed-state", /^LIVE$/);
    await waitText(page, ".facts", /1 resyncs?/);
    await shot(page, cfg.shots, "run-draining");
    const released = await fetch(cfg.releaseURL);
    assert.equal(released.status, 200);
    await runStatus(page, /^PAUSED$/);
    await waitText(page, "table.events", /RunDrained/);
    assert.equal(await page.locator('svg.dag g.node[data-step="after"][data-status="PENDING"]').count(), 1, "nothing new starts while paused");
    await page.locator("#act-resume").click();
    await confirm(page, "Resume");
    await runStatus(page, /^COMPLETED/);
    await waitText(page, "#feed-state", /FINAL/);
    const seqs = await page.locator("table.events tbody tr").evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-seq"))));
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "after the resync the log holds every run_seq once, in order");

    log("cancel takes effect");
    await openRunFromList(page, cfg.cancelRun);
    await page.locator("#act-cancel").click();
    await confirm(page, "Cancel run", { "#act-reason": "console test" });
    await runStatus(page, /^CANCELLED/);
    await waitText(page, "#feed-state", /FINAL/);

    log("a cancel with compensation rolls back the succeeded step");
    await openRunFromList(page, cfg.compensateRun);
    await page.locator('svg.dag g.node[data-step="wait"][data-status="WAITING_FOR_SIGNAL"]').waitFor();
    await page.locator("#act-cancel").click();
    await page.locator("dialog[open] #act-compensate").check();
    await shot(page, cfg.shots, "cancel-compensate");
    await confirm(page, "Cancel run", { "#act-reason": "customer left" });
    await waitText(page, ".accepted", /succeeded steps are compensated first/);
    await runStatus(page, /^CANCELLED/);
    await waitText(page, "#compensation", /^ROLLED_BACK$/);
    await waitText(page, "table.events", /CompensationSucceeded/);

    log("the schedules page shows a schedule's next fire and last run; pause and resume are confirmed");
    await page.getByRole("link", { name: "Schedules" }).click();
    const row = page.locator(`tr[data-schedule-id="${cfg.schedule}"]`);
    await row.waitFor();
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .state .badge`, /^ACTIVE$/);
    assert.match((await row.locator(".next-fire").textContent()) ?? "", /\d/, "the next fire time is shown");
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .last-fire a`, new RegExp(cfg.scheduleRun));
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"]`, /cron 0 2 \* \* \* \(Europe\/Berlin\)/);
    await waitText(page, 'tr[data-schedule-id="hourly-sync"] .state .badge', /^PAUSED$/);
    await waitText(page, 'tr[data-schedule-id="hourly-sync"]', /every 1 h\s*overlap BUFFER_ONE/);
    await shot(page, cfg.shots, "schedules");
    await row.getByRole("button", { name: "Pause" }).click();
    await page.locator("dialog[open]").getByRole("button", { name: "Close" }).click();
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .state .badge`, /^ACTIVE$/);
    await row.getByRole("button", { name: "Pause" }).click();
    await confirm(page, "Pause schedule");
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .state .badge`, /^PAUSED$/);
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .next-fire`, /^paused$/);
    await waitText(page, ".accepted", new RegExp(`Schedule ${cfg.schedule} paused`));
    await row.getByRole("button", { name: "Resume" }).click();
    await confirm(page, "Resume schedule");
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .state .badge`, /^ACTIVE$/);
    await row.getByRole("button", { name: "Pause" }).click();
    await confirm(page, "Pause schedule");
    await waitText(page, `tr[data-schedule-id="${cfg.schedule}"] .state .badge`, /^PAUSED$/);
    await row.locator(".last-fire a").click();
    await waitText(page, "#run-id", new RegExp(cfg.scheduleRun));
    await runStatus(page, /^BLOCKED/);

    log("another tenant sees none of acme's runs");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#token").waitFor();
    await page.reload();
    await page.locator("#token").waitFor(); // sign-out ended the session at weftd
    await signIn(page, cfg.betaToken);
    await page.locator(`tr[data-run-id="${cfg.betaRun}"]`).waitFor();
    assert.equal(await page.locator("table.runs tbody tr[data-run-id]").count(), 1, "beta sees only its own run");
    await waitText(page, 'button.count:not([data-status]) .count-n', /^1$/);
    await page.getByRole("link", { name: "Schedules" }).click();
    await waitText(page, "table.schedules td.empty", /No schedules/);
    await page.goto(`${cfg.authURL}/ui/#/runs/${cfg.mainRun}`);
    await page.reload();
    await waitText(page, ".fault-code", /^NOT_FOUND$/);
    await page.close();

    log("without tokens the console opens directly");
    const open = await newPage(browser, problems);
    await open.goto(`${cfg.openURL}/ui/`);
    await open.locator(`tr[data-run-id="${cfg.openRun}"]`).waitFor();
    assert.equal(await open.locator("#token").count(), 0, "no sign-in without tokens");
    assert.equal(await open.getByRole("button", { name: "Sign out" }).count(), 0);

    assert.deepEqual(problems, [], "the browser reported problems");
    log("all scenarios passed");
  } catch (e) {
    // What the browser saw, for the failure's report.
    if (problems.length > 0) log(`browser problems: ${problems.join(" | ")}`);
    if (current && !current.isClosed()) await current.screenshot({ path: join(cfg.shots, "failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await browser.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`e2e: FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
