package schedule

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	timesource "github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

const tenant = "tenant-a"

// start is where every test's clock begins: on a whole hour.
var start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// bundle is one test's store, clock, engines and schedulers (one of each
// unless the test asks for more: they share the store and the clock).
type bundle struct {
	t     *testing.T
	ctx   context.Context
	store store.Store
	clock *timesource.Manual
	eng   *engine.Engine
	sch   *Scheduler
}

// storeKinds are the backends every exactly-once test runs on.
var storeKinds = []string{"memory", "pebble", "postgresql"}

// openStore opens a fresh store of a kind.
func openStore(t *testing.T, kind string) store.Store {
	t.Helper()
	switch kind {
	case "memory":
		return memstore.New(memstore.Config{})
	case "pebble":
		st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	default:
		return sqltest.Open(t, sqltest.NewSchema(t))
	}
}

func setup(t *testing.T) *bundle { return setupOn(t, memstore.New(memstore.Config{})) }

func setupOn(t *testing.T, st store.Store) *bundle {
	t.Helper()
	b := &bundle{t: t, ctx: context.Background(), store: st, clock: timesource.NewManual(start)}
	b.eng, b.sch = b.newProcess(nil)
	return b
}

// newProcess is one more engine and scheduler over the bundle's store, as a
// second weftd would have; runs wraps the engine when a test needs to.
func (b *bundle) newProcess(wrap func(Runs) Runs) (*engine.Engine, *Scheduler) {
	b.t.Helper()
	eng, err := engine.New(engine.Config{Store: b.store, Clock: b.clock, Ownership: engine.CASRequired})
	require.NoError(b.t, err)
	var runs Runs = eng
	if wrap != nil {
		runs = wrap(eng)
	}
	sch, err := New(Config{Store: b.store, Runs: runs, Clock: b.clock})
	require.NoError(b.t, err)
	return eng, sch
}

// definition is one action that waits for a signal: its run stays RUNNING
// (BLOCKED) until the test ends it.
func waitingDefinition() definition.Definition {
	return definition.Definition{PlanID: "nightly", PlanVersion: "1", Actions: []definition.Action{
		{ID: "wait", Order: 1, WaitForSignal: &definition.SignalWait{SignalName: "go"}},
	}}
}

// create makes a schedule with the test's definition.
func (b *bundle) create(id string, spec Spec) *View {
	b.t.Helper()
	v, err := b.sch.Create(b.ctx, CreateParams{TenantID: tenant, ScheduleID: id, Spec: spec,
		Definition: waitingDefinition(), CreatedBy: "alice"})
	require.NoError(b.t, err)
	return v
}

// tickAt advances the clock by d and ticks the bundle's scheduler.
func (b *bundle) tickAt(d time.Duration) {
	b.t.Helper()
	b.clock.Advance(d)
	require.NoError(b.t, b.sch.Tick(b.ctx))
}

// runs answers the tenant's runs by run_request_id (for a schedule's fires,
// by nominal time).
func (b *bundle) runs() []*runstate.Snapshot {
	b.t.Helper()
	list, err := b.eng.Queries().ListRuns(b.ctx, engine.ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(b.t, err)
	out := make([]*runstate.Snapshot, 0, len(list.Runs))
	for _, r := range list.Runs {
		snap, err := b.eng.GetRun(b.ctx, engine.GetRunParams{TenantID: tenant, RunID: r.RunID})
		require.NoError(b.t, err)
		out = append(out, snap)
	}
	slices.SortFunc(out, func(x, y *runstate.Snapshot) int { return strings.Compare(x.RunRequestID, y.RunRequestID) })
	return out
}

// requestIDs answers every run's run_request_id, requiring each to be unique.
func (b *bundle) requestIDs() []string {
	b.t.Helper()
	var ids []string
	seen := map[string]bool{}
	for _, r := range b.runs() {
		require.False(b.t, seen[r.RunRequestID], "two runs for %s", r.RunRequestID)
		seen[r.RunRequestID] = true
		ids = append(ids, r.RunRequestID)
	}
	return ids
}

// cancel ends a run.
func (b *bundle) cancel(runID string) {
	b.t.Helper()
	_, err := b.eng.CancelRun(b.ctx, engine.ControlParams{TenantID: tenant, RunID: runID, Actor: "bob"})
	require.NoError(b.t, err)
}

// get reads a schedule.
func (b *bundle) get(id string) *View {
	b.t.Helper()
	v, err := b.sch.Get(b.ctx, tenant, id, DefaultNextFires)
	require.NoError(b.t, err)
	return v
}
