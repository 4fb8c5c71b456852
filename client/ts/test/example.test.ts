// The README's quickstart with the TypeScript worker: examples/ts/worker.ts
// (run by Node 22 as it is, importing the built package by name) takes the
// example workflow (examples/workflow.yaml) through to COMPLETED with its
// signal and manual step, then stops cleanly on SIGTERM.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createWeftClient, fromValue, RunStatus } from "../src/index.js";
import { repoRoot, startWeftd } from "./support/weftd.js";
import { childEnv } from "./support/env.js";

const root = repoRoot();
const built = existsSync(join(root, "client/ts/dist/worker/index.js"));
if (!built && process.env.CI) throw new Error("CI is set and client/ts/dist is missing (make ts-build)");

test("the example TypeScript worker runs the example workflow to COMPLETED and stops on SIGTERM", { skip: !built && "client/ts/dist is not built (make ts-build)" }, async () => {
  const weftd = await startWeftd();
  const worker = spawn(process.execPath, [join(root, "examples/ts/worker.ts")], {
    cwd: root,
    env: childEnv({ WEFT_URL: weftd.url }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let logs = "";
  worker.stderr!.on("data", (b: Buffer) => (logs += b.toString()));
  const exited = new Promise<number | null>((r) => worker.once("exit", (code) => r(code)));
  try {
    const weft = createWeftClient({ baseUrl: weftd.url });
    const { run } = await weft.submit(readFileSync(join(root, "examples/workflow.yaml"), "utf8"));
    let token = "";
    for await (const ev of weft.watchEvents(run.runId)) {
      if (ev.eventType === "StepWaiting" && ev.stepId === "payment-confirmed") {
        await weft.signalRun({ runId: run.runId, signalName: "payment-confirmed", payload: { reference: "PAY-42" } });
      }
      if (ev.payload.case === "stepWaiting" && ev.stepId === "approve-shipment") {
        token = ev.payload.value.completionToken;
        break;
      }
    }
    await weft.completeManualAction({ runId: run.runId, actionId: "approve-shipment", completionToken: token, actorUserId: "alice" });
    const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.COMPLETED, `${done.message}\n${logs}`);
    const ship = fromValue(done.steps.find((s) => s.actionId === "ship")?.output) as { carrier: string; tracking: string };
    assert.equal(ship.carrier, "post");
    assert.match(ship.tracking, /^trk-/);
    worker.kill("SIGTERM");
    assert.equal(await exited, 0, `the example worker did not stop cleanly:\n${logs}`);
    assert.match(logs, /"msg":"worker stopped"/);
  } finally {
    worker.kill("SIGKILL");
    await weftd.stop();
  }
});
