package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

const waitsYAML = `
planId: waits
steps:
  - name: wait
    waitForSignal: go
`

const manualYAML = `
planId: manual
steps:
  - name: approve
    manual: true
`

// holdJSON is the API's JSON WorkflowDefinition: one step that holds the run when it fails.
const holdJSON = `{"plan_id": "hold", "plan_version": "1", "actions": [
  {"id": "a", "order": 1, "activity": "always-fails", "on_failure": "ON_FAILURE_HOLD", "retry": {"max_attempts": 1}}]}`

func (b *bundle) submitFile(name, content string, flags ...string) string {
	b.t.Helper()
	args := append([]string{"submit", "--quiet"}, flags...)
	return strings.TrimSpace(b.ok(append(args, writeFile(b.t, name, content))...))
}

func TestSubmit_Spec002YAMLWithStart_RunsTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	out := b.ok("submit", "--start", "--run-request-id", "req-1", "--project", "shop", "--env", "prod",
		"--input", `{"customer": "c-1"}`, writeFile(t, "w.yaml", waitsYAML))
	require.Regexp(t, `plan\s+waits@1`, out)
	runID := strings.Fields(out)[1]
	run := b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	require.Equal(t, "shop", run.GetProjectId())
	require.Equal(t, "prod", run.GetEnvironmentId())
	require.Equal(t, "c-1", run.GetInput().GetStructValue().GetFields()["customer"].GetStringValue())
	again := b.ok("submit", "--start", "--run-request-id", "req-1", "--project", "shop", "--env", "prod", writeFile(t, "w.yaml", waitsYAML))
	require.Contains(t, again, "an existing run matched")
}

func TestSubmit_APIJSONDefinitionWithoutStart_StaysPendingUntilStart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("def.json", holdJSON)
	run, err := b.c.GetRun(context.Background(), runID)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_PENDING, run.GetStatus())
	require.Equal(t, "hold", run.GetPlanId())
	out := b.ok("start", runID)
	require.Contains(t, out, runID)
	require.NotEqual(t, weftv1.RunStatus_RUN_STATUS_PENDING, b.eventually(runID, func(*weftv1.Run) bool { return true }).GetStatus())
}

// TestSubmit_InvalidDefinitionFile_ExitsOneNamingTheYAMLPathWithoutAUsageLine:
// the command line was right, the file was not (issue 37).
func TestSubmit_InvalidDefinitionFile_ExitsOneNamingTheYAMLPathWithoutAUsageLine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.weft("submit", writeFile(t, "bad.yaml", "planId: p\nsteps:\n  - name: a\n    timeout: 5\n"))
	require.Equal(t, 1, r.code)
	require.ErrorContains(t, r.err, "steps[0].timeout")
	require.NotContains(t, r.err.Error()+r.stderr, "usage:")
}

func TestSubmit_YAMLWithMistakes_ExitsOneWithEveryErrorByYAMLPathOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.weft("submit", writeFile(t, "mistakes.yaml", `planId: p
spec:
  steps:
    - name: a
      dependsOn: [b]
      timeOut: 5m
    - name: b
      dependsOn: [a]
      retryPolicy: {maxAttempts: 99}
`))
	require.Equal(t, 1, r.code, "%v", r.err)
	msg := r.err.Error()
	for _, field := range []string{"spec.steps[0].timeOut", "spec.steps[1].retryPolicy.maxAttempts", "spec.steps", "spec.steps[1].dependsOn[0]"} {
		require.Equal(t, 1, strings.Count(msg, field+":"), "%s reported once in: %s", field, msg)
	}
	require.Contains(t, msg, `did you mean "timeout"?`)
	require.NotContains(t, msg, "actions[", "no API path in an error about a YAML file")
	require.NotContains(t, msg, "depends_on", "no API name in an error about a YAML file")
}

func TestInYAML_TheServersFindingsAreNamedByYAMLPathOnce(t *testing.T) {
	t.Parallel()
	_, paths, err := definition.ReadYAML([]byte("planId: p\nspec:\n  steps: [{name: a}, {name: b}]\n"))
	require.NoError(t, err)
	server := &client.Error{Code: client.CodeInvalidArgument, Message: "invalid definition: definition.actions[1].queue: too long",
		Violations: []client.FieldViolation{
			{Field: "definition.actions[1].queue", Rule: "action.queue_max_len", Message: "queue is too long"},
			{Field: "definition.actions[1].queue", Rule: "action.queue_max_len", Message: "queue is too long"},
			{Field: "definition.actions[0].timeout_ms", Rule: "action.timeout_range", Message: "timeout is too long"},
		}, CorrelationID: "c-1"}
	got := inYAML(server, paths)
	var e *client.Error
	require.ErrorAs(t, got, &e)
	require.Equal(t, []string{"spec.steps[1].queue", "spec.steps[0].timeout"}, []string{e.Violations[0].Field, e.Violations[1].Field})
	require.Len(t, e.Violations, 2, "once each")
	require.NotContains(t, got.Error(), "actions[")
	require.Contains(t, got.Error(), "correlation id c-1")
	require.Same(t, error(server), inYAML(server, nil), "a JSON file's errors stay as the server named them")
}

func TestGet_TableShowsStepsAndJSONUsesProtoFieldNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("w.yaml", waitsYAML, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	table := b.ok("get", runID)
	require.Regexp(t, `status\s+BLOCKED`, table)
	require.Contains(t, table, "waiting for signal go")
	js := b.ok("get", runID, "--output", "json")
	var doc map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	require.Equal(t, runID, doc["run"]["run_id"])
	require.Contains(t, doc["run"], "created_at")
	require.Equal(t, "RUN_STATUS_BLOCKED", doc["run"]["status"])
}

func TestList_FiltersByStatusAndPlan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	blocked := b.submitFile("w.yaml", waitsYAML, "--start")
	pending := b.submitFile("m.yaml", manualYAML)
	b.eventually(blocked, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	out := b.ok("list", "--status", "blocked")
	require.Contains(t, out, blocked)
	require.NotContains(t, out, pending)
	out = b.ok("list", "--plan", "manual")
	require.Contains(t, out, pending)
	require.NotContains(t, out, blocked)
	js := b.ok("list", "-o", "json", "--status", "PENDING,RUN_STATUS_BLOCKED")
	require.Contains(t, js, `"run_id"`)
	r := b.weft("list", "--status", "sleeping")
	require.Equal(t, 2, r.code)
}

func TestEvents_ListsAfterASeqAndWatchesUntilTheRunEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("w.yaml", waitsYAML, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	out := b.ok("events", runID)
	require.Contains(t, out, "RunSubmitted")
	require.Contains(t, out, "waiting for signal go")
	after := b.ok("events", runID, "--after", "1", "-o", "json")
	require.NotContains(t, after, `"RunSubmitted"`)
	for line := range strings.SplitSeq(strings.TrimSpace(after), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "one JSON event per line")
		require.Contains(t, ev, "run_seq")
	}
	watched := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	go func() { watched <- b.weftCtx(ctx, "events", "--watch", runID) }()
	b.ok("signal", runID, "go")
	r := <-watched
	require.Equal(t, 0, r.code, "%v", r.err)
	require.Contains(t, r.stdout, "SignalConsumed")
	require.Contains(t, r.stdout, "RunCompleted")
}

func TestSignal_ReusedSignalIDAnswersTheOriginalResult(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("w.yaml", waitsYAML, "--start")
	first := b.ok("signal", runID, "go", "--signal-id", "sig-7", "--payload", `{"ok": true}`)
	require.Contains(t, first, "signal go accepted for run "+runID+" (signal id sig-7)")
	require.NotContains(t, first, "duplicate")
	second := b.ok("signal", "--signal-id", "sig-7", runID, "go", "--payload", `{"ok": true}`)
	require.Contains(t, second, "duplicate: answered with the original result")
	run := b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_COMPLETED))
	require.True(t, stepOf(run, "wait").GetOutput().GetStructValue().GetFields()["ok"].GetBoolValue())
}

func TestComplete_ManualStepWithTokenOutcomeAndOutput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("m.yaml", manualYAML, "--start")
	run := b.eventually(runID, func(r *weftv1.Run) bool { return stepOf(r, "approve").GetCompletionToken() != "" })
	token := stepOf(run, "approve").GetCompletionToken()
	require.Contains(t, b.ok("get", runID), "completion token "+token)
	r := b.weft("complete", runID, "approve", "--actor", "alice")
	require.Equal(t, 2, r.code, "the token is required")
	out := b.ok("complete", runID, "approve", "--token", token, "--outcome", "succeeded", "--actor", "alice",
		"--notes", "fine", "--output", `{"approved": true}`, "--evidence", "ticket-1")
	require.Contains(t, out, "step approve of run "+runID+" completed SUCCEEDED by alice (principal ", "the declared actor and the principal, each named")
	run = b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_COMPLETED))
	require.True(t, stepOf(run, "approve").GetOutput().GetStructValue().GetFields()["approved"].GetBoolValue())
	js := b.ok("complete", runID, "approve", "--token", token, "--actor", "alice", "-o", "json")
	require.Contains(t, js, `"duplicate": true`)
}

func TestPauseResumeCancel_SteerTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("w.yaml", waitsYAML, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	require.Contains(t, b.ok("pause", runID, "--reason", "maintenance"), "PAUSED")
	require.Contains(t, b.ok("resume", runID), "BLOCKED")
	require.Contains(t, b.ok("cancel", runID, "--reason", "no longer needed"), "CANCELLED")
	r := b.weft("pause", runID)
	require.Equal(t, 1, r.code)
	require.ErrorContains(t, r.err, "IllegalTransition")
}

func TestRetryStepAndSkipStep_ReleaseAHeldRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.startWorker(func(w *worker.Worker) {
		worker.Register(w, "always-fails", func(ctx context.Context, in struct{}) (string, error) {
			return "", worker.Fail(worker.ClassValidation, "nope", errors.New("always fails"))
		})
	})
	runID := b.submitFile("def.json", holdJSON, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	b.ok("retry-step", runID, "a", "--reason", "try again")
	run := b.eventually(runID, func(r *weftv1.Run) bool {
		return r.GetStatus() == weftv1.RunStatus_RUN_STATUS_BLOCKED && stepOf(r, "a").GetLogicalAttemptId() == 2
	})
	require.Equal(t, weftv1.StepStatus_STEP_STATUS_FAILED, stepOf(run, "a").GetStatus())
	b.ok("skip-step", runID, "a", "--reason", "give up")
	run = b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_COMPLETED))
	require.Equal(t, weftv1.StepStatus_STEP_STATUS_SKIPPED, stepOf(run, "a").GetStatus())
}

func TestAPIError_ExitsOneWithFaultCodeAndCorrelationID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.weft("get", "no-such-run")
	require.Equal(t, 1, r.code)
	require.ErrorContains(t, r.err, "NotFound")
	require.ErrorContains(t, r.err, "correlation id")
}

func TestUsageErrors_ExitTwo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, args := range [][]string{
		{"get"},
		{"get", "a", "b"},
		{"signal", "run-1"},
		{"get", "run-1", "--output", "yaml"},
		{"complete", "run-1", "a", "--token", "t", "--actor", "u", "--outcome", "maybe"},
		{"signal", "run-1", "go", "--payload", "{not json"},
		{"get", "run-1", "--no-such-flag"},
	} {
		r := b.weft(args...)
		require.Equal(t, 2, r.code, "weft %s", strings.Join(args, " "))
	}
}

func TestToken_IsSentAsBearerFromFlagOrEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The server does not check tokens yet; the call must still succeed with one.
	runID := b.submitFile("w.yaml", waitsYAML)
	r := b.weft("--token", "s3cret", "get", runID)
	require.Equal(t, 0, r.code, "%v", r.err)
}

// failsOnceJSON fails its first step for good; a rerun finds the worker fixed.
const failsOnceJSON = `{"plan_id": "fails-once", "plan_version": "1", "actions": [
  {"id": "a", "order": 1, "activity": "first"},
  {"id": "b", "order": 2, "activity": "flaky", "retry": {"max_attempts": 1}}]}`

func TestRerun_TakesAFailedRunBackToRunningFromAStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var firsts, flakies atomic.Int32
	b.startWorker(func(w *worker.Worker) {
		worker.Register(w, "first", func(ctx context.Context, in struct{}) (string, error) { firsts.Add(1); return "one", nil })
		worker.Register(w, "flaky", func(ctx context.Context, in struct{}) (string, error) {
			if flakies.Add(1) == 1 {
				return "", worker.Fail(worker.ClassValidation, "not yet", errors.New("not yet"))
			}
			return "two", nil
		})
	})
	runID := b.submitFile("def.json", failsOnceJSON, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_FAILED))
	r := b.weft("rerun", runID)
	require.Equal(t, 2, r.code, "--from is required")
	require.Contains(t, b.ok("rerun", runID, "--from", "b", "--reason", "fixed the worker", "--signal-id", "rerun-1"), "RUNNING")
	run := b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_COMPLETED))
	require.Equal(t, uint32(2), stepOf(run, "b").GetLogicalAttemptId())
	require.Equal(t, int32(1), firsts.Load(), "the upstream step ran once")
	js := b.ok("rerun", runID, "--from", "b", "--signal-id", "rerun-1", "-o", "json")
	require.Contains(t, js, `"signal_id": "rerun-1"`)
	require.Contains(t, js, `"status": "RUN_STATUS_COMPLETED"`, "a retried rerun answers the first and reruns nothing")
	r = b.weft("rerun", runID, "--from", "nope")
	require.Equal(t, 1, r.code)
	require.ErrorContains(t, r.err, "NotFound")
}

func TestBatch_StartDescribeAndCancelOverManyRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var ids []string
	for range 3 {
		id := b.submitFile("w.yaml", waitsYAML, "--start")
		b.eventually(id, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
		ids = append(ids, id)
	}
	out := b.ok("batch", "start", "pause-3", "--op", "pause", "--runs", strings.Join(ids, ","), "--rate", "100", "--reason", "maintenance")
	require.Contains(t, out, "batch pause-3: pause of 3 runs")
	for _, id := range ids {
		b.eventually(id, statusIs(weftv1.RunStatus_RUN_STATUS_PAUSED))
	}
	require.Eventually(t, func() bool {
		return strings.Contains(b.ok("batch", "describe", "pause-3"), "COMPLETED")
	}, 30*time.Second, 20*time.Millisecond)
	desc := b.ok("batch", "describe", "pause-3")
	require.Contains(t, desc, "done 3/3 (succeeded 3, failed 0, skipped 0)")
	for _, id := range ids {
		require.Contains(t, desc, id)
	}
	require.Contains(t, b.ok("batch", "start", "pause-3", "--op", "cancel", "--runs", ids[0]), "was started before",
		"the same id again answers the original batch")
	require.Contains(t, b.ok("batch", "list"), "pause-3")
	require.Contains(t, b.ok("batch", "cancel", "pause-3"), "COMPLETED", "an ended batch is answered as it is")
	r := b.weft("batch", "start", "x", "--op", "explode", "--runs", ids[0])
	require.Equal(t, 2, r.code)
	r = b.weft("batch", "start", "x", "--op", "rerun_from", "--runs", ids[0])
	require.Equal(t, 1, r.code)
	require.ErrorContains(t, r.err, "from_step")
}
