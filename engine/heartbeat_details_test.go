package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// heartbeat sends a heartbeat with details ("" sends none).
func (b *bundle) heartbeat(task *Task, details string) {
	b.t.Helper()
	var raw json.RawMessage
	if details != "" {
		raw = json.RawMessage(details)
	}
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: task.Token, Details: raw})
	require.NoError(b.t, err)
	require.False(b.t, hb.CancelRequested)
}

// attemptEvents answers the run's StepAttemptRecorded events, in order.
func (b *bundle) attemptEvents(runID string) []runstate.Event {
	b.t.Helper()
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(b.t, err)
	var out []runstate.Event
	for _, ev := range res.Events {
		if ev.Type == runstate.EvStepAttemptRecorded {
			out = append(out, ev)
		}
	}
	return out
}

func TestHeartbeatDetails_TheLastDetailsSentReachTheNextAttemptAfterAHeartbeatTimeout(t *testing.T) {
	b := setup(t)
	def := seq("a")
	def.Actions[0].HeartbeatTimeout = definition.Ms(10_000)
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 4, InitialBackoff: definition.Ms(1000), Strategy: definition.BackoffConstant}
	run := b.submit(def)

	first := b.poll("act-a")
	require.Nil(t, first.HeartbeatDetails, "a first attempt has no earlier details")
	b.heartbeat(first, `{"page":3}`)
	b.heartbeat(first, "") // a heartbeat without details keeps those sent
	b.clock.Advance(11 * time.Second)
	b.tick() // the heartbeat timeout ends the attempt
	require.Equal(t, runstate.AttemptTimedOut, b.run(run.RunID).Step("a").Attempts[0].Outcome)
	b.clock.Advance(time.Second)
	b.tick()

	second := b.poll("act-a")
	require.Equal(t, 2, second.EngineAttempt)
	require.JSONEq(t, `{"page":3}`, string(second.HeartbeatDetails))
	b.fail(second, definition.ErrorTransient) // it sent none: the details before it stay
	b.clock.Advance(time.Second)
	b.tick()

	third := b.poll("act-a")
	require.JSONEq(t, `{"page":3}`, string(third.HeartbeatDetails))
	b.heartbeat(third, `{"page":7}`)
	b.fail(third, definition.ErrorTransient)
	b.clock.Advance(time.Second)
	b.tick()

	fourth := b.poll("act-a")
	require.JSONEq(t, `{"page":7}`, string(fourth.HeartbeatDetails), "the latest details win")
	b.complete(fourth, `1`)
	require.Empty(t, b.run(run.RunID).Step("a").HeartbeatDetails, "a step that ended keeps no details")
}

func TestHeartbeatDetails_ANewLogicalAttemptStartsWithoutThem(t *testing.T) {
	b := setup(t)
	def := seq("a")
	def.Actions[0].OnFailure = definition.OnFailureHold
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 1}
	run := b.submit(def)
	task := b.poll("act-a")
	b.heartbeat(task, `"halfway"`)
	b.fail(task, definition.ErrorTransient)
	require.Equal(t, runstate.RunBlocked, b.run(run.RunID).Status)
	_, err := b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "a", Actor: "op"})
	require.NoError(t, err)
	again := b.poll("act-a")
	require.Equal(t, 2, again.LogicalAttempt)
	require.Nil(t, again.HeartbeatDetails)
}

func TestHeartbeatDetails_OverTheInlineLimitOrNotJSONAreRefusedNamingTheField(t *testing.T) {
	b := setup(t)
	b.submit(seq("a"))
	task := b.poll("act-a")
	for name, c := range map[string]struct {
		details string
		code    Code
	}{
		"too large": {`"` + strings.Repeat("x", DefaultInlineResultLimit) + `"`, CodePayloadTooLarge},
		"not JSON":  {`{"page":`, CodeInvalidArgument},
	} {
		_, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: task.Token, Details: json.RawMessage(c.details)})
		var e *Error
		require.ErrorAs(t, err, &e, name)
		require.Equal(t, c.code, e.Code, name)
		require.Equal(t, "details", e.Violations[0].Field, name)
	}
}

func TestRetryAfter_TheNextAttemptIsDueAtTheLaterOfItAndTheBackoff(t *testing.T) {
	for name, c := range map[string]struct {
		retryAfter, due time.Duration
	}{
		"longer than the backoff":  {retryAfter: time.Minute, due: time.Minute},
		"shorter than the backoff": {retryAfter: 100 * time.Millisecond, due: time.Second},
		"none":                     {retryAfter: 0, due: time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			def := seq("a")
			def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 3, InitialBackoff: definition.Ms(1000), Strategy: definition.BackoffConstant}
			run := b.submit(def)
			task := b.poll("act-a")
			failedAt := b.clock.Now()
			res, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1",
				ErrorClass: definition.ErrorRateLimit, Message: "slow down", RetryAfter: c.retryAfter})
			require.NoError(t, err)
			require.True(t, res.WillRetry)
			evs := b.attemptEvents(run.RunID)
			require.Len(t, evs, 1)
			require.True(t, evs[0].Data.WillRetry)
			require.Equal(t, failedAt.Add(c.due).UTC(), evs[0].Data.NextAttemptAt.UTC(), "the recorded due time")
			b.clock.Advance(c.due - time.Millisecond)
			b.tick()
			b.pollNone("act-a")
			b.clock.Advance(time.Millisecond)
			b.tick()
			require.Equal(t, 2, b.poll("act-a").EngineAttempt)
		})
	}
}

func TestRetryAfter_TheRunsTimeoutStillEndsTheRunWhileItWaits(t *testing.T) {
	b := setup(t)
	def := seq("a")
	def.Timeout = definition.Ms(60_000)
	run := b.submit(def)
	task := b.poll("act-a")
	_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1",
		ErrorClass: definition.ErrorRateLimit, RetryAfter: time.Hour})
	require.NoError(t, err)
	b.clock.Advance(time.Minute)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.True(t, snap.Error.WorkflowTimeout)
}

func TestRetryAfter_ANonRetryableFailureIsNotRetriedForIt(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	task := b.poll("act-a")
	res, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1",
		ErrorClass: definition.ErrorValidation, RetryAfter: time.Second})
	require.NoError(t, err)
	require.False(t, res.WillRetry)
	require.Equal(t, runstate.StepFailed, b.run(run.RunID).Step("a").Status)
}
