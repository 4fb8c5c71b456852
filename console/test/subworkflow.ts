// Drives the run page's links between a parent run and its child run
// (docs/semantics.md#sub-workflows) in headless Chromium against the weftd
// cmd/weftd/console_subworkflow_test.go started: from the parent's page to
// the child its step runs, and back through the child's parent link.
//
//   node console/test-dist/subworkflow.mjs '<config JSON>'
import assert from "node:assert/strict";
import { launch, newPage, shot, waitText } from "./support/page.js";

interface Config {
  url: string;
  parent: string;
  child: string;
  /** The parent's sub-workflow step. */
  step: string;
  shots: string;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;

async function main(): Promise<void> {
  const browser = await launch();
  const problems: string[] = [];
  const page = await newPage(browser, problems);
  try {
    await page.goto(`${cfg.url}/ui/#/runs/${encodeURIComponent(cfg.parent)}`);
    await waitText(page, "#run-id", new RegExp(cfg.parent));
    const child = page.locator(`#run-child-${cfg.step}`);
    await waitText(page, `#run-child-${cfg.step}`, new RegExp(cfg.child));
    await shot(page, cfg.shots, "subworkflow-parent");
    await child.click();
    await page.waitForURL(new RegExp(`#/runs/${encodeURIComponent(cfg.child)}$`));
    await waitText(page, "#run-id", new RegExp(cfg.child));
    await waitText(page, "#run-parent", new RegExp(`${cfg.parent}.*${cfg.step}`));
    assert.equal(await page.locator("#run-children").count(), 0, "the child starts no run of its own");
    await shot(page, cfg.shots, "subworkflow-child");
    await page.locator("#run-parent-link").click();
    await page.waitForURL(new RegExp(`#/runs/${encodeURIComponent(cfg.parent)}$`));
    await waitText(page, "#run-id", new RegExp(cfg.parent));
    assert.deepEqual(problems, []);
    process.stdout.write(JSON.stringify({ ok: true }) + "\n");
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stderr.write(`subworkflow: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
