// A page that uses the client through connect-web against a weftd on another
// origin (?weft=http://127.0.0.1:<port>), so every call needs a CORS
// preflight. It writes what it saw into #results as JSON and sets
// body[data-done] when finished; cmd/weftd/browser_test.go (CORS) and
// client/ts/test/browser.test.ts (the SDK's calls) assert it.
import { createWeftClient, runStatusName, toWeftError, type WeftClient } from "../../src/index.js";

type Outcome = Record<string, unknown>;

async function outcome(call: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return { ok: true, ...(await call()) };
  } catch (e) {
    const err = toWeftError(e);
    return {
      ok: false,
      code: err.code,
      connectCode: err.connectCode,
      violations: err.violations.map((v) => ({ field: v.field, ruleId: v.ruleId })),
      correlationId: err.correlationId ?? null,
      networkError: err.isNetworkError,
      message: err.message,
    };
  }
}

async function main(): Promise<Record<string, Outcome>> {
  const baseUrl = new URLSearchParams(location.search).get("weft");
  if (!baseUrl) throw new Error("the page needs ?weft=<weftd url>");
  const results: Record<string, Outcome> = {};
  for (const transport of ["connect", "grpc-web"] as const) {
    const weft = createWeftClient({ baseUrl, transport });
    results[`${transport}.getRunInvalid`] = await outcome(async () => {
      await weft.runs.getRun({ runId: "" });
      return {};
    });
    results[`${transport}.submitAndGet`] = await outcome(async () => {
      const submitted = await weft.runs.submitRun({
        definition: {
          planId: "browser",
          planVersion: "1",
          actions: [{ id: "work", order: 1, activity: `browser.${transport}` }],
        },
      });
      const runId = submitted.run?.runId ?? "";
      const { run } = await weft.runs.getRun({ runId });
      return { submittedRunId: runId, runId: run?.runId ?? null, status: run ? runStatusName(run.status) : null };
    });
    results[`${transport}.workflow`] = await outcome(() => workflow(weft, transport));
  }
  return results;
}

/**
 * workflow drives a run through the SDK's own calls: submit from YAML, watch
 * its events (a server stream), signal the step that waits, complete the
 * manual step with the token its StepWaiting event carries, await the result
 * and find the run in the list.
 */
async function workflow(weft: WeftClient, transport: string): Promise<Outcome> {
  const planId = `browser-flow-${transport}`;
  const yaml = [
    `metadata: {name: ${planId}, version: "1"}`,
    "spec:",
    "  steps:",
    "    - name: confirmed",
    "      waitForSignal: go",
    "    - name: approve",
    "      dependsOn: [confirmed]",
    "      manual: true",
  ].join("\n");
  const { run } = await weft.submit(yaml, { input: { from: "browser" } });
  const seen: string[] = [];
  let token = "";
  let signalled = false;
  let duplicate: boolean | null = null;
  for await (const ev of weft.watchEvents(run.runId)) {
    seen.push(ev.eventType);
    if (ev.eventType === "StepWaiting" && ev.stepId === "confirmed" && !signalled) {
      signalled = true;
      duplicate = (await weft.signalRun({ runId: run.runId, signalName: "go", payload: { ok: true } })).duplicate;
    }
    if (ev.payload.case === "stepWaiting" && ev.stepId === "approve") {
      token = ev.payload.value.completionToken;
      break;
    }
  }
  await weft.completeManualAction({ runId: run.runId, actionId: "approve", completionToken: token, actorUserId: "browser-user", output: { approved: true } });
  const done = await weft.awaitRun(run.runId, { timeoutMs: 15000 });
  const listed: string[] = [];
  for await (const r of weft.listRuns({ planId })) listed.push(r.runId);
  return { runId: run.runId, status: runStatusName(done.status), events: seen, signalDuplicate: duplicate, tokenSeen: token !== "", listed };
}

const out = document.getElementById("results")!;
main().then(
  (results) => {
    out.textContent = JSON.stringify({ origin: location.origin, results });
    document.body.dataset.done = "true";
  },
  (e: unknown) => {
    out.textContent = JSON.stringify({ origin: location.origin, error: String(e) });
    document.body.dataset.done = "true";
  },
);
