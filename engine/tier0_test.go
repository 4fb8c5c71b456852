package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/acceptance"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

func waitingRun(b *bundle, names ...string) string {
	b.t.Helper()
	def := definition.Definition{PlanID: "plan", PlanVersion: "1"}
	for i, n := range names {
		def.Actions = append(def.Actions, definition.Action{ID: n, Order: i + 1, WaitForSignal: &definition.SignalWait{SignalName: n}})
	}
	return b.submit(def).RunID
}

func (b *bundle) signal(runID, name string, id *string) (*SignalResult, error) {
	return b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: runID, SignalName: name, SignalID: id, Payload: json.RawMessage(`{"v":1}`)})
}

func (b *bundle) exists(key []byte) bool {
	b.t.Helper()
	_, err := b.store.Get(b.ctx, key)
	return err == nil
}

func scenarioSignalRetention_ExpiredRecordsGoAndARetryIsANewSignal(t *testing.T, b *bundle) {
	b.eng.cfg.SignalRetention = time.Hour
	runID := waitingRun(b, "first", "second")
	id := "sig-1"
	first, err := b.signal(runID, "first", &id)
	require.NoError(t, err)
	b.clock.Advance(59 * time.Minute)
	b.tick()
	again, err := b.signal(runID, "first", &id)
	require.NoError(t, err)
	require.True(t, again.Duplicate, "within retention a retry answers the original")
	require.Equal(t, first.Result, again.Result)
	b.clock.Advance(time.Minute)
	b.tick()
	require.False(t, b.exists(acceptance.RecordKey(runID, "first", id)))
	require.False(t, b.exists(acceptance.PayloadKey(runID, "first", id)))
	after, err := b.signal(runID, "first", &id)
	require.NoError(t, err)
	require.False(t, after.Duplicate, "after retention the retry is a new signal")
}

func scenarioSignalRetention_KeepsASignalTheRunHasNotConsumed(t *testing.T, b *bundle) {
	b.eng.cfg.SignalRetention = time.Hour
	runID := waitingRun(b, "first")
	id := "pending"
	_, err := b.signal(runID, "not-yet-awaited", &id)
	require.NoError(t, err)
	b.clock.Advance(2 * time.Hour)
	b.tick()
	require.True(t, b.exists(acceptance.PayloadKey(runID, "not-yet-awaited", id)), "an unconsumed payload is never removed")
	dup, err := b.signal(runID, "not-yet-awaited", &id)
	require.NoError(t, err)
	require.True(t, dup.Duplicate)
}

func scenarioSignal_OnlyThePayloadDurableAnswersAcceptanceIndeterminate(t *testing.T, b *bundle) {
	runID := waitingRun(b, "go")
	id := "crashed:between"
	// The crash window of docs/semantics.md#signal-crash-window: the payload was appended, its accepted
	// response was not (an older writer, or a record lost to an operator).
	_, err := b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(acceptance.PayloadKey(runID, "go", id), []byte(`{"secret":"payload"}`))}})
	require.NoError(t, err)
	before := b.run(runID)
	_, err = b.signal(runID, "go", &id)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, CodeSignalAcceptanceIndeterminate, e.Code)
	require.Equal(t, runID, e.RunID)
	require.Equal(t, "go", e.SignalName)
	require.Equal(t, id, e.SignalID)
	require.NotContains(t, err.Error(), "secret")
	after := b.run(runID)
	require.Equal(t, before.LastEventSeq, after.LastEventSeq, "nothing was enqueued")
	require.Equal(t, runstate.StepWaitingSignal, after.Step("go").Status)
}

func scenarioSignal_ReservedCharactersInIDsNeverCollide(t *testing.T, b *bundle) {
	runID := waitingRun(b, "a", "b")
	ids := []string{"x:y", "x%3Ay", "x%y", "x:y:"}
	results := map[string]AcceptedSignal{}
	for _, id := range ids {
		res, err := b.signal(runID, "a", &id)
		require.NoError(t, err)
		require.False(t, res.Duplicate, "%q is a new signal", id)
		results[id] = res.Result
	}
	for _, id := range ids {
		res, err := b.signal(runID, "a", &id)
		require.NoError(t, err)
		require.True(t, res.Duplicate)
		require.Equal(t, results[id], res.Result)
	}
}

func scenarioPersistedFormat_UnknownPrefixesBreakNoScanAndAreLeftAlone(t *testing.T, b *bundle) {
	runID := b.submit(seq("a")).RunID
	foreign := [][]byte{
		store.Key("zz", "from-a-newer-version"),
		keyspace.Run.Key(runID, "zz", "additive"),
		store.Key("sigq", runID, "x"),
		keyspace.Ready.Key(tenant, "default", "not-a-time", "junk"),
	}
	var ops []store.Op
	for _, k := range foreign {
		ops = append(ops, store.Put(k, []byte("opaque")))
	}
	_, err := b.store.Commit(b.ctx, &store.Batch{Ops: ops})
	require.NoError(t, err)
	b.complete(b.poll("act-a"), `1`)
	b.clock.Advance(time.Hour)
	b.tick()
	require.Equal(t, runstate.RunCompleted, b.run(runID).Status)
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list.Runs, 1)
	for _, k := range foreign {
		item, err := b.store.Get(b.ctx, k)
		require.NoError(t, err, "%s was touched", k)
		require.Equal(t, "opaque", string(item.Value))
	}
}

func scenarioSignal_DurableReplayAfterACrashAnswersTheOriginalResult(t *testing.T, b *bundle) {
	runID := waitingRun(b, "first", "second")
	id := "replay-me"
	first, err := b.signal(runID, "first", &id)
	require.NoError(t, err)
	b.restart() // the process dies after the accepted response was made durable
	again, err := b.signal(runID, "first", &id)
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, first.Result, again.Result, "the canonical accepted result, not a new one")
	require.Equal(t, 1, countEvents(b, runID, runstate.EvSignalAccepted))
}

func scenarioSignal_WithoutAnIDIsANewSignalEveryTime(t *testing.T, b *bundle) {
	runID := waitingRun(b, "first", "second")
	one, err := b.signal(runID, "later", nil)
	require.NoError(t, err)
	two, err := b.signal(runID, "later", nil)
	require.NoError(t, err)
	require.NotEqual(t, one.Result.SignalID, two.Result.SignalID, "a fresh identifier per accepted request")
	require.False(t, two.Duplicate)
	require.Equal(t, 2, countEvents(b, runID, runstate.EvSignalAccepted))
}
