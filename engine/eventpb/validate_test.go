package eventpb

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

func validEvent() *runstate.Event {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return &runstate.Event{Type: runstate.EvStepStarted, ID: uuid.NewString(), RunID: "run-1", Seq: 5,
		IdempotencyKey: runstate.IdempotencyKey("run-1", "a", 1, runstate.EvStepStarted, "1", 0), EmittedAt: at,
		EmittedBy: "activity-worker:w1", StepID: "a", LogicalAttempt: 1, PlanVersion: "1",
		Data: runstate.EventData{Status: string(runstate.StepRunning), WorkerID: "w1", StartedAt: at}}
}

func TestValidate_AcceptsAWellFormedEvent(t *testing.T) {
	require.NoError(t, Validate(validEvent()))
}

func TestValidate_RejectsEachBrokenEnvelopeRuleByFieldAndRule(t *testing.T) {
	for _, tc := range []struct {
		field, rule string
		breakIt     func(*runstate.Event)
	}{
		{"emitted_by", "string.min_len", func(ev *runstate.Event) { ev.EmittedBy = "" }},
		{"event_id", "string.uuid", func(ev *runstate.Event) { ev.ID = "not-a-uuid" }},
		{"run_id", "string.min_len", func(ev *runstate.Event) { ev.RunID = "" }},
		{"run_seq", "uint64.gte", func(ev *runstate.Event) { ev.Seq = 0 }},
		{"idempotency_key", "string.pattern", func(ev *runstate.Event) { ev.IdempotencyKey = "ABC" }},
		{"emitted_at", "required", func(ev *runstate.Event) { ev.EmittedAt = time.Time{} }},
		{"step_id", "string.min_len", func(ev *runstate.Event) { ev.StepID = "" }},
		{"logical_attempt_id", "uint32.gte", func(ev *runstate.Event) { ev.LogicalAttempt = 0 }},
		{"payload", "required", func(ev *runstate.Event) { ev.Type = "Unheard" }},
		{"step_started.started_at", "required", func(ev *runstate.Event) { ev.Data.StartedAt = time.Time{} }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			ev := validEvent()
			tc.breakIt(ev)
			err := Validate(ev)
			var e *SchemaError
			require.ErrorAs(t, err, &e)
			require.Equal(t, ev.Type, e.Type)
			require.Equal(t, tc.field, e.Violations[0].Field)
			require.Equal(t, tc.rule, e.Violations[0].Rule)
		})
	}
}

func TestValidate_ErrorNeverQuotesAValue(t *testing.T) {
	ev := validEvent()
	ev.IdempotencyKey = "SECRET-PAYLOAD-VALUE"
	ev.ID = "another-secret"
	err := Validate(ev)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "SECRET-PAYLOAD-VALUE")
	require.NotContains(t, err.Error(), "another-secret")
}
