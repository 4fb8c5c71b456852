package engine

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/memstore"
)

func TestEventValidation_EveryEventOfARunIsValidatedAgainstTheProtoSchema(t *testing.T) {
	b := setup(t)
	scenarioDAG_AllOfJoinWaitsForEveryPredecessor(t, b)
	runs, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, runs.Runs, 1)
	require.EqualValues(t, runs.Runs[0].LastEventSeq, b.validated.Load(), "every appended event passed the validator")
}

func TestEventValidation_AnInvalidEventFailsTheDecisionAndNothingIsPersisted(t *testing.T) {
	var blank atomic.Bool
	b := setupWith(t, memstore.New(memstore.Config{}), func(c *Config) {
		inner := c.validateEvent // the proto's rules, as every engine applies them
		c.validateEvent = func(ev *runstate.Event) error {
			if blank.Load() && ev.Type == runstate.EvStepCompleted {
				broken := *ev
				broken.EmittedBy = "" // a test hook: a producer that forgot who it is
				return inner(&broken)
			}
			return inner(ev)
		}
	})
	run := b.submit(seq("a"))
	task := b.poll("act-a")
	before := b.run(run.RunID)
	cp, err := b.store.Get(b.ctx, runlog.CheckpointKey(run.RunID))
	require.NoError(t, err)
	taskBefore, err := b.store.Get(b.ctx, record.TaskKey(task.TaskID))
	require.NoError(t, err)

	blank.Store(true)
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1",
		Output: json.RawMessage(`{"secret":"s3cr3t"}`)})
	require.Equal(t, CodeSchemaValidationFailed, CodeOf(err))
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Contains(t, e.Message, runstate.EvStepCompleted)
	require.Equal(t, "emitted_by", e.Violations[0].Field)
	require.Equal(t, "string.min_len", e.Violations[0].Rule)
	require.NotContains(t, err.Error(), "s3cr3t", "no payload in the error")

	// Nothing of the decision was written: checkpoint, task and log are as they were.
	cpAfter, err := b.store.Get(b.ctx, runlog.CheckpointKey(run.RunID))
	require.NoError(t, err)
	require.Equal(t, cp.Version, cpAfter.Version)
	taskAfter, err := b.store.Get(b.ctx, record.TaskKey(task.TaskID))
	require.NoError(t, err)
	require.Equal(t, taskBefore.Version, taskAfter.Version)
	after, _, err := runlog.ReadEvents(b.ctx, b.store, run.RunID, before.LastEventSeq, 10)
	require.NoError(t, err)
	require.Empty(t, after, "no event after the last one before the decision")
	require.Equal(t, before.LastEventSeq, b.run(run.RunID).LastEventSeq)
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("a").Status)

	blank.Store(false) // the same report, now valid, is applied
	b.complete(task, `1`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
