// The client in headless Chromium (Debian's, through playwright-core): the
// page test/browser/page.ts, served from one loopback origin, drives a run on
// a weftd on another (started here with --cors-origin for the page) through
// connect-web, over the Connect protocol and gRPC-Web: submit from YAML, watch
// events, signal, complete a manual step, await, list; and typed faults.
// Without Chromium the test skips, and fails when CI is set.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { repoRoot, startWeftd, type Weftd } from "./support/weftd.js";
import { childEnv } from "./support/env.js";

const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const missing = !existsSync(executablePath);
if (missing && process.env.CI) throw new Error(`CI is set and ${executablePath} is missing (make tools installs Debian's chromium)`);

let server: Server;
let origin = "";
let weftd: Weftd;

before(async () => {
  if (missing) return;
  const root = repoRoot();
  execFileSync("npm", ["run", "-s", "build:browser"], { cwd: root, env: childEnv({}), stdio: ["ignore", "inherit", "inherit"] });
  const html = readFileSync(join(root, "client/ts/test/browser/index.html"));
  const js = readFileSync(join(root, "client/ts/dist-test/browser/page.js"));
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
    else if (path === "/page.js") res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(js);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  origin = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  weftd = await startWeftd(["--cors-origin", origin]);
});

after(async () => {
  if (missing) return;
  server.close();
  assert.equal(await weftd.stop(), 0, "weftd did not exit 0 on SIGTERM");
});

interface PageOutcome {
  ok: boolean;
  code?: string;
  violations?: Array<{ field: string; ruleId: string }>;
  status?: string;
  events?: string[];
  signalDuplicate?: boolean;
  tokenSeen?: boolean;
  runId?: string;
  listed?: string[];
  message?: string;
}

test("the client in headless Chromium drives a run across origins: YAML submit, watched events, a signal, a manual completion, await, list, typed faults", { skip: missing && "chromium is not installed (make tools)" }, async () => {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    const logs: string[] = [];
    page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
    await page.goto(`${origin}/?weft=${encodeURIComponent(weftd.url)}`);
    await page.waitForSelector("body[data-done]", { timeout: 60000 });
    const got = JSON.parse((await page.textContent("#results")) ?? "null") as { origin: string; error?: string; results: Record<string, PageOutcome> };
    assert.equal(got.error, undefined, `the page failed; console: ${logs.join("\n")}`);
    assert.equal(got.origin, origin);
    for (const transport of ["connect", "grpc-web"]) {
      const invalid = got.results[`${transport}.getRunInvalid`];
      assert.equal(invalid.ok, false);
      assert.equal(invalid.code, "InvalidArgument", transport);
      assert.deepEqual(invalid.violations, [{ field: "run_id", ruleId: "string.min_len" }], transport);

      const flow = got.results[`${transport}.workflow`];
      assert.ok(flow.ok, `${transport}: ${flow.code} ${flow.message}; console: ${logs.join("\n")}`);
      assert.equal(flow.status, "COMPLETED", transport);
      assert.equal(flow.signalDuplicate, false, transport);
      assert.ok(flow.tokenSeen, `${transport}: no completion token in the manual step's StepWaiting event`);
      assert.equal(flow.events?.[0], "RunSubmitted", `${transport}: the watch did not start at the first event`);
      assert.ok(flow.events?.includes("StepWaiting"), `${transport}: events ${flow.events}`);
      assert.deepEqual(flow.listed, [flow.runId], `${transport}: the run is not listed under its plan`);
    }
  } finally {
    await browser.close();
  }
});
