package batch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// TestBatch_AQuerySelectionIsFixedWhenTheBatchStarts: a batch that selects
// by a query acts on exactly the runs the query matched when it started,
// newest first — a run that matches only afterwards is left alone, and one
// that stops matching is still acted on — on memory, Pebble and
// PostgreSQL; a bad query is refused naming the field and the column, and
// writes no batch.
func TestBatch_AQuerySelectionIsFixedWhenTheBatchStarts(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			st := openStore(t, kind)
			eng, err := engine.New(engine.Config{Store: st})
			require.NoError(t, err)
			b := &bundle{t: t, ctx: t.Context(), store: st, eng: eng}
			b.b, err = New(Config{Store: st, Runs: eng, Select: eng.Queries().SelectRuns, Owner: "p1", LeaseTTL: time.Hour,
				Interval: 10 * time.Millisecond})
			require.NoError(t, err)
			def := definition.Definition{PlanID: "waits", PlanVersion: "1", Actions: []definition.Action{
				{ID: "wait", Order: 1, WaitForSignal: &definition.SignalWait{SignalName: "go"}}}}
			submit := func(customer string) string {
				res, err := eng.SubmitRun(b.ctx, engine.SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice",
					SearchAttributes: []runstate.SearchAttribute{{Name: "customer", Type: "keyword", Value: []byte(`"` + customer + `"`)}}})
				require.NoError(t, err)
				return res.Run.RunID
			}
			acme1, _, acme2 := submit("acme"), submit("globex"), submit("acme")

			_, _, err = b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "bad", Operation: OpCancel, Query: `customer = `, CreatedBy: "op"})
			require.Equal(t, engine.CodeInvalidArgument, engine.CodeOf(err))
			require.Contains(t, err.Error(), "column 12")
			_, _, _, err = b.b.Describe(b.ctx, tenant, "bad", 1, "")
			require.Equal(t, engine.CodeNotFound, engine.CodeOf(err), "a refused batch is not stored")

			listed, err := eng.Queries().ListRuns(b.ctx, engine.ListRunsParams{TenantID: tenant, Query: `customer = "acme" AND status = "BLOCKED"`})
			require.NoError(t, err)
			require.Len(t, listed.Runs, 2)
			require.ElementsMatch(t, []string{acme1, acme2}, []string{listed.Runs[0].RunID, listed.Runs[1].RunID})
			v, _, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "q1", Operation: OpCancel,
				Query: `customer = "acme" AND status = "BLOCKED"`, Rate: 1000, CreatedBy: "op"})
			require.NoError(t, err)
			require.Equal(t, 2, v.Total)
			require.Equal(t, `customer = "acme" AND status = "BLOCKED"`, v.Query)
			late := submit("acme") // matches only after the batch started
			_, err = eng.PauseRun(b.ctx, engine.ControlParams{TenantID: tenant, RunID: acme1, Actor: "op"})
			require.NoError(t, err) // no longer BLOCKED, still selected
			v = b.until("q1")
			require.Equal(t, StateCompleted, v.State)
			_, runs, _, err := b.b.Describe(b.ctx, tenant, "q1", 10, "")
			require.NoError(t, err)
			require.Len(t, runs, 2)
			require.Equal(t, []string{listed.Runs[0].RunID, listed.Runs[1].RunID}, []string{runs[0].RunID, runs[1].RunID}, "as the query listed them")
			for _, r := range runs {
				require.Equal(t, OutcomeSucceeded, r.Outcome)
				require.Equal(t, runstate.RunCancelled, b.status(r.RunID))
			}
			require.Equal(t, runstate.RunBlocked, b.status(late), "a run the query matched only later is left alone")
		})
	}
}
