// Drives the console's sign-in in Chromium (playwright-core) against weftd and
// the test's OpenID provider (internal/oidctest): the provider's login page,
// who is signed in, a viewer's controls off with the reason and the server's
// own denial, an operator's action through a pasted token, the admin's audit
// page with its filters and pages, and a session renewed before expiry and
// ended when the provider ends it. cmd/weftd/console_signin_test.go runs it.
import assert from "node:assert/strict";
import { chromium, type Browser, type Page } from "playwright-core";
import { newPage, shot, waitText } from "./support/page.js";

interface Config {
  url: string;
  providerURL: string;
  /** A run of acme that waits for a signal. */
  run: string;
  operatorToken: string;
  /** Fetching it makes the provider end alice's tokens. */
  endSessionsURL: string;
  shots: string;
}

const cfg = JSON.parse(process.argv[2] ?? "") as Config;
const log = (msg: string) => process.stderr.write(`signin: ${msg}\n`);

/** signInAtProvider clicks through the provider's login page. */
async function signInAtProvider(page: Page, user: string, password: string, name?: string): Promise<void> {
  await page.goto(`${cfg.url}/ui/`);
  await page.locator("#signin-oidc").click();
  await page.waitForURL((u) => u.toString().startsWith(cfg.providerURL));
  await page.locator("#username").fill(user);
  await page.locator("#password").fill(password);
  if (name) await shot(page, cfg.shots, name);
  await page.getByRole("button", { name: "Login" }).click();
  await page.waitForURL((u) => u.toString().startsWith(`${cfg.url}/ui/`));
  await waitText(page, "#who-principal", new RegExp(`^${user}$`));
}

async function main(): Promise<void> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const problems: string[] = [];
  try {
    log("the sign-in page offers the identity provider and a token");
    const admin = await newPage(browser, problems);
    await admin.goto(`${cfg.url}/ui/`);
    await admin.locator("#signin-oidc").waitFor();
    await admin.locator("#token").waitFor();
    await shot(admin, cfg.shots, "console-signin");

    log("alice signs in through the provider's page and sees who she is");
    await signInAtProvider(admin, "alice", "alice-pw", "provider-login");
    await waitText(admin, "#who-roles", /^admin$/);
    await waitText(admin, "#who-tenant", /^acme$/);
    await waitText(admin, "#who", /\(oidc\)/);
    assert.equal(await admin.evaluate(() => sessionStorage.length + localStorage.length), 0, "no token in the page's storage");
    assert.equal(await admin.evaluate(() => document.cookie), "", "the session cookie is HttpOnly");
    await admin.locator(`tr[data-run-id="${cfg.run}"]`).waitFor();
    await shot(admin, cfg.shots, "console-signed-in");

    log("a viewer's controls are off, with the reason; the server's own denial shows clearly");
    const viewer = await newPage(browser, problems);
    await signInAtProvider(viewer, "vic", "vic-pw");
    await waitText(viewer, "#who-roles", /^viewer$/);
    assert.equal(await viewer.locator("#nav-audit").count(), 0, "no audit log for a viewer");
    await viewer.goto(`${cfg.url}/ui/#/runs/${cfg.run}`);
    await waitText(viewer, "#run-gated", /needs runs\.operate \(operator, admin\); your roles: viewer/);
    for (const id of ["#act-pause", "#act-signal", "#act-cancel"]) assert.ok(await viewer.locator(id).isDisabled(), `${id} is off for a viewer`);
    assert.match((await viewer.locator("#act-pause").getAttribute("title")) ?? "", /needs runs\.operate/);
    await shot(viewer, cfg.shots, "console-viewer");
    await viewer.goto(`${cfg.url}/ui/#/audit`);
    await waitText(viewer, "#audit-gated", /for admins: it needs audit\.read/);
    // Past the console's own check (as a stale page or a hand-made call would be), weftd refuses.
    await viewer.goto(`${cfg.url}/ui/#/runs/${cfg.run}`);
    await viewer.locator("#act-pause").evaluate((b) => ((b as HTMLButtonElement).disabled = false));
    await viewer.locator("#act-pause").click();
    const dialog = viewer.locator("dialog[open]");
    await dialog.getByRole("button", { name: "Pause", exact: true }).click();
    await waitText(viewer, ".fault-code", /^PERMISSION_DENIED$/);
    await waitText(viewer, ".fault-message", /permission "runs\.operate" denied/);
    await shot(viewer, cfg.shots, "console-viewer-denied");
    await viewer.context().close();

    log("an operator signs in with a pasted token and pauses the run");
    const op = await newPage(browser, problems);
    await op.goto(`${cfg.url}/ui/`);
    await op.locator("#token").fill(cfg.operatorToken);
    await op.getByRole("button", { name: "Sign in with the token" }).click();
    await waitText(op, "#who-roles", /^operator$/);
    assert.equal(await op.locator("#token").count(), 0);
    await op.goto(`${cfg.url}/ui/#/runs/${cfg.run}`);
    await op.locator("#act-pause:not([disabled])").waitFor();
    assert.equal(await op.locator("#run-gated").count(), 0);
    await op.locator("#act-pause").click();
    await op.locator("dialog[open]").getByRole("button", { name: "Pause", exact: true }).click();
    await waitText(op, ".accepted", /Pause accepted/);
    await waitText(op, "#run-status .badge", /^PAUSED/);
    await shot(op, cfg.shots, "console-operator");
    await op.getByRole("button", { name: "Sign out" }).click();
    await op.locator("#token").waitFor();
    await op.context().close();

    log("the admin's audit page: who, how, outcome, correlation id; filters and pages");
    await admin.locator("#nav-audit").click();
    await admin.locator("#audit-table tbody tr").first().waitFor();
    await waitText(admin, `#audit-table tr[data-procedure="/weft.v1.RunService/PauseRun"][data-outcome="ok"]`, /olga.*token/);
    await waitText(admin, `#audit-table tr[data-procedure="/weft.v1.RunService/PauseRun"][data-outcome="permission_denied"]`, /vic.*oidc/);
    await shot(admin, cfg.shots, "console-audit");
    await admin.locator("#a-outcome").selectOption("permission_denied");
    await admin.locator("#a-apply").click();
    await admin.waitForFunction(() => {
      const rows = [...document.querySelectorAll("#audit-table tbody tr")];
      return rows.length > 0 && rows.every((r) => r.getAttribute("data-outcome") === "permission_denied");
    });
    await admin.locator("#a-outcome").selectOption("");
    await admin.locator("#a-principal").fill("ci");
    await admin.locator("#a-apply").click();
    await admin.waitForFunction(() => document.querySelectorAll("#audit-table tbody tr").length === 50);
    await admin.locator("#a-older:not([disabled])").click();
    await admin.waitForFunction(() => {
      const n = document.querySelectorAll("#audit-table tbody tr").length;
      return n > 0 && n < 50;
    });
    assert.ok(await admin.locator("#a-newer").isEnabled());
    await shot(admin, cfg.shots, "console-audit-page2");

    log("alice's session is renewed before her token expires, and ends once the provider ends it");
    await admin.goto(`${cfg.url}/ui/#/`);
    const first = Number(await admin.locator("#who").getAttribute("data-expires"));
    assert.ok(first > Date.now() - 60_000, `the session's token expiry is shown (data-expires ${first}, now ${Date.now()})`);
    await admin.waitForFunction((f) => Number(document.querySelector("#who")?.getAttribute("data-expires")) > f, first, { timeout: 90_000 });
    const res = await fetch(cfg.endSessionsURL);
    assert.equal(res.status, 200);
    await waitText(admin, "#signin-message", /^Your sign-in expired and could not be renewed; sign in again$/);
    await shot(admin, cfg.shots, "console-session-ended");

    assert.deepEqual(problems, [], "the browser reported problems");
    log("all scenarios passed");
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stderr.write(`signin: FAILED: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
