package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

func TestProjection_UnknownEventTypesAdvanceTheWatermarkOnly(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	base, err := projectionBase(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID, PageSize: 100})
	require.NoError(t, err)
	before := runstate.Project(base, page.Events)
	next := page.Events[len(page.Events)-1].Seq + 1
	after := runstate.Project(before, []runstate.Event{{Type: "EventFromTheFuture", Seq: next, StepID: "a"}})
	require.Equal(t, next, after.LastEventSeq)
	after.LastEventSeq = before.LastEventSeq
	require.Equal(t, comparable(before), comparable(after))
}

func TestProjection_ReprocessingIsIdempotentAndSnapshotsAreImmutable(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	b.complete(b.poll("act-a"), `1`)
	base, err := projectionBase(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID, PageSize: 100})
	require.NoError(t, err)
	once := runstate.Project(base, page.Events)
	twice := runstate.Project(once, page.Events)
	require.Equal(t, comparable(once), comparable(twice))
	require.Equal(t, runstate.StepPending, base.Step("a").Status, "the base snapshot was not changed")
}

func TestProjector_NonContiguousFetchResyncsAndAdvancesTheWatermark(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	p, err := NewProjector(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.NoError(t, p.Catch(b.ctx))
	mark := p.Snapshot().LastEventSeq
	b.complete(b.poll("act-a"), `1`)
	// The event right after the watermark is not visible yet (a delayed write).
	_, err = b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Delete(runlog.EventKey(run.RunID, mark+1))}})
	require.NoError(t, err)
	require.NoError(t, p.Catch(b.ctx))
	require.Equal(t, 1, p.Resyncs)
	require.Greater(t, p.Snapshot().LastEventSeq, mark)
	require.Equal(t, runstate.StepSucceeded, p.Snapshot().Step("a").Status)
	b.noProjectionCheck = true // the log has a hole on purpose
}
