package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

func TestAlert_ProjectorLagHighWhenTheOldestUnappliedEventIsOlderThan5s(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	p, err := NewProjector(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	b.clock.Advance(ProjectorLagThreshold) // exactly 5s: not over the threshold
	require.NoError(t, p.Catch(b.ctx))
	require.Zero(t, b.alerts.count(AlertProjectorLagHigh))

	b.complete(b.poll("act-a"), `1`)
	b.clock.Advance(ProjectorLagThreshold + time.Second)
	require.NoError(t, p.Catch(b.ctx))
	got := b.alerts.named(AlertProjectorLagHigh)
	require.Len(t, got, 1)
	require.Equal(t, run.RunID, got[0].attrs["run_id"])
	require.Equal(t, "6s", got[0].attrs["lag"])
	require.Equal(t, runstate.StepSucceeded, p.Snapshot().Step("a").Status, "a lagging projector still applies everything")
}

func TestAlert_ProjectorNonContiguousFetchGoesThroughTheHook(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	p, err := NewProjector(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.NoError(t, p.Catch(b.ctx))
	mark := p.Snapshot().LastEventSeq
	b.complete(b.poll("act-a"), `1`)
	_, err = b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Delete(runlog.EventKey(run.RunID, mark+1))}})
	require.NoError(t, err)
	require.NoError(t, p.Catch(b.ctx))
	got := b.alerts.named(AlertProjectorNonContiguousFetch)
	require.Len(t, got, 1)
	require.Equal(t, map[string]string{"run_id": run.RunID, "watermark": itoa(mark), "next_seq": itoa(mark + 2)}, got[0].attrs)
	b.noProjectionCheck = true // the log has a hole on purpose
}

func TestAlert_ProjectorCausalViolationIsInformationalAndStateIsStillApplied(t *testing.T) {
	b := setup(t)
	run := b.submit(dag()) // b needs a
	p, err := NewProjector(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.NoError(t, p.Catch(b.ctx))
	mark := p.Snapshot().LastEventSeq
	// A later-causal event with a lower run_seq (docs/semantics.md#run-seq): b starts
	// before the projection has seen a succeed.
	inverted := []runstate.Event{
		{Type: runstate.EvStepStarted, RunID: run.RunID, Seq: mark + 1, StepID: "b", Data: runstate.EventData{StartedAt: b.clock.Now()}},
		{Type: runstate.EvStepCompleted, RunID: run.RunID, Seq: mark + 2, StepID: "a", Data: runstate.EventData{CompletedAt: b.clock.Now()}},
		{Type: runstate.EvStepStarted, RunID: run.RunID, Seq: mark + 3, StepID: "c", Data: runstate.EventData{StartedAt: b.clock.Now()}},
	}
	snap := p.project(b.ctx, p.Snapshot(), inverted, mark)
	got := b.alerts.named(AlertProjectorCausalViolation)
	require.Len(t, got, 1, "only b's start came before its dependency; c's came after")
	require.Equal(t, map[string]string{"run_id": run.RunID, "run_seq": itoa(mark + 1), "event_type": runstate.EvStepStarted,
		"step_id": "b", "dependency": "a"}, got[0].attrs)
	require.Equal(t, runstate.StepRunning, snap.Step("b").Status, "applied in run_seq order anyway")
	require.Equal(t, mark+3, snap.LastEventSeq)
	b.noProjectionCheck = true // the alert above was raised on purpose
}

func TestAlert_PauseDrainTimeoutIsRaisedOnceAfterTheDecisionCommits(t *testing.T) {
	b := setup(t)
	def := seq("a", "b")
	def.Actions[0].Timeout = definition.Ms(3_600_000)
	run := b.submit(def)
	b.poll("act-a")
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.clock.Advance(DefaultDrainTimeout - time.Millisecond)
	b.tick()
	require.Zero(t, b.alerts.count(AlertPauseDrainTimeout))
	b.clock.Advance(time.Millisecond)
	b.tick()
	b.tick()
	got := b.alerts.named(AlertPauseDrainTimeout)
	require.Len(t, got, 1)
	require.Equal(t, map[string]string{"run_id": run.RunID, "orphaned_tasks": "1", "pause": "1"}, got[0].attrs)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
