// A page that uses the client through connect-web against a weftd on another
// origin (?weft=http://127.0.0.1:<port>), so every call needs a CORS
// preflight. It writes what it saw into #results as JSON and sets
// body[data-done] when finished; cmd/weftd/browser_test.go asserts it.
import { createWeftClient, runStatusName, toWeftError } from "../../src/index.js";

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
  }
  return results;
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
