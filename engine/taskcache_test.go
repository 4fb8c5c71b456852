package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// taskReads counts the store reads of task records.
type taskReads struct {
	store.Store
	n atomic.Int64
}

func (s *taskReads) Get(ctx context.Context, key []byte) (store.Item, error) {
	if strings.HasPrefix(string(key), string(record.TaskKey(""))) {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, key)
}

func TestTaskCache_AReportOnAClaimThisEngineMadeReadsNoTaskRecord(t *testing.T) {
	st := &taskReads{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, st)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	before := st.n.Load()
	b.complete(ta, `{}`)
	require.Equal(t, before, st.n.Load(), "the claim's record and version came from the cache")
	b.complete(b.poll("act-b"), `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func TestTaskCache_AReportOnAStaleCachedRecordIsDecidedAgainOnTheStores(t *testing.T) {
	a, b := sharingAStore(t)
	run := a.submit(seq("a"))
	ta := a.poll("act-a")                                                                    // a caches the claimed record
	_, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: ta.Token}) // b rewrites it: a's copy is stale
	require.NoError(t, err)

	res, err := a.eng.CompleteTask(a.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{"step":"a"}`)})
	require.NoError(t, err, "the stale copy's commit failed on the task's version; the store's record was current")
	require.False(t, res.Duplicate)
	requireEachResultRecordedOnce(t, a.eng, run.RunID)

	again, err := a.eng.CompleteTask(a.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{"step":"a"}`)})
	require.NoError(t, err)
	require.True(t, again.Duplicate, "a repeated report is answered duplicate")
}

// A worker retries a report whose answer it lost, and the retry reaches
// another engine than the one that recorded it: the engine that claimed the
// task still caches it as claimed, but the retry is answered duplicate, as
// the store's record says, not as a lost claim.
func TestTaskCache_ARetriedReportRecordedByAnotherEngineIsADuplicate(t *testing.T) {
	for _, readFirst := range []bool{false, true} {
		a, b := sharingAStore(t)
		run := a.submit(seq("a"))
		ta := a.poll("act-a") // a caches the claimed record
		report := ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{"step":"a"}`)}
		_, err := b.eng.CompleteTask(b.ctx, report) // recorded by b; its answer lost
		require.NoError(t, err)
		if readFirst {
			a.run(run.RunID) // a's cached checkpoint is current: the decision commits nothing
		}
		res, err := a.eng.CompleteTask(a.ctx, report)
		require.NoError(t, err, "read first: %v", readFirst)
		require.True(t, res.Duplicate, "read first: %v", readFirst)
		requireEachResultRecordedOnce(t, a.eng, run.RunID)
	}
}
