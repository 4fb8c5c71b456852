package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/memstore"
)

// sharingAStore answers two engines sharing one store, as two weftd processes
// do; a submitted the run, so its checkpoint cache knows the run.
func sharingAStore(t *testing.T) (a, b *bundle) {
	t.Helper()
	st := memstore.New(memstore.Config{})
	return setupWith(t, st), setupWith(t, st)
}

func TestDecisionsFromTheCache_AStaleCheckpointDecidesNothingAndTheDecisionIsRemadeOnTheStore(t *testing.T) {
	a, b := sharingAStore(t)
	run := a.submit(seq("s1", "s2"))
	b.complete(b.poll("act-s1"), `{"step":"s1"}`) // a's cached checkpoint is now stale

	t2 := a.poll("act-s2") // decided first on a's stale cache, whose commit fails, then on the store's
	require.Equal(t, "s2", t2.ActionID)
	a.complete(t2, `{"step":"s2"}`)
	require.Equal(t, runstate.RunCompleted, a.run(run.RunID).Status)
	requireEachResultRecordedOnce(t, a.eng, run.RunID)
}

func TestDecisionsFromTheCache_ARefusalMadeOnAStaleCheckpointIsCheckedOnTheStore(t *testing.T) {
	a, b := sharingAStore(t)
	run := a.submit(seq("s1", "s2"))
	b.complete(b.poll("act-s1"), `{}`)
	t2 := b.poll("act-s2") // claimed through b; a's cache has never heard of this task

	res, err := a.eng.CompleteTask(a.ctx, ReportParams{TenantID: tenant, Token: t2.Token, WorkerID: "w1", Output: json.RawMessage(`{}`)})
	require.NoError(t, err, "a stale cache said the claim was lost; the store says it is current")
	require.False(t, res.Duplicate)
	require.Equal(t, runstate.RunCompleted, a.run(run.RunID).Status)
}
