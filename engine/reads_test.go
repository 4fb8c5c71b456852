package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/acceptance"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// readCounter is a store that counts the reads of each key (a Get) and of
// each range (a Scan, by its start), while counting is on.
type readCounter struct {
	store.Store
	mu       sync.Mutex
	counting bool
	gets     map[string]int
	scans    map[string]int
}

func newReadCounter(st store.Store) *readCounter {
	return &readCounter{Store: st, gets: map[string]int{}, scans: map[string]int{}}
}

func (s *readCounter) Get(ctx context.Context, key []byte) (store.Item, error) {
	s.mu.Lock()
	if s.counting {
		s.gets[string(key)]++
	}
	s.mu.Unlock()
	return s.Store.Get(ctx, key)
}

func (s *readCounter) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	s.mu.Lock()
	if s.counting {
		s.scans[string(p.Prefix)+"|"+string(p.Start)]++
	}
	s.mu.Unlock()
	return s.Store.Scan(ctx, p)
}

// during counts the reads f makes, and answers them by key.
func (s *readCounter) during(f func()) (gets, scans map[string]int) {
	s.mu.Lock()
	s.counting, s.gets, s.scans = true, map[string]int{}, map[string]int{}
	s.mu.Unlock()
	f()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counting = false
	return s.gets, s.scans
}

// requireEachReadOnce fails when a key or a range was read more than once.
func requireEachReadOnce(t *testing.T, gets, scans map[string]int) {
	t.Helper()
	for k, n := range gets {
		require.Equal(t, 1, n, "key %q read %d times in one call", k, n)
	}
	for k, n := range scans {
		require.Equal(t, 1, n, "range %q scanned %d times in one call", k, n)
	}
}

// signalWaitDef is one step waiting for the signal "go".
func signalWaitDef() definition.Definition {
	def := seq("w")
	def.Actions[0].Activity = ""
	def.Actions[0].WaitForSignal = &definition.SignalWait{SignalName: "go"}
	return def
}

// An idempotent signal reads its payload key once, whether it is new (and
// completes the step waiting for it) or a duplicate of an accepted one; and
// every other key at most once.
func scenarioReads_AnIdempotentSignalReadsItsPayloadKeyOnce(t *testing.T, b *bundle) {
	counter := newReadCounter(b.store)
	b = setupWith(t, counter)
	run := b.submit(signalWaitDef())
	id := "sig-1"
	payloadKey := string(acceptance.PayloadKey(run.RunID, "go", id))
	send := func() *SignalResult {
		r, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", SignalID: &id,
			Payload: json.RawMessage(`{"ok":true}`)})
		require.NoError(t, err)
		return r
	}
	var first *SignalResult
	gets, scans := counter.during(func() { first = send() })
	require.False(t, first.Duplicate)
	require.Equal(t, 1, gets[payloadKey], "a new signal's payload key")
	requireEachReadOnce(t, gets, scans)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)

	var again *SignalResult
	gets, scans = counter.during(func() { again = send() })
	require.True(t, again.Duplicate)
	require.Equal(t, first.Result, again.Result)
	require.Equal(t, 1, gets[payloadKey], "a duplicate's payload key")
	requireEachReadOnce(t, gets, scans)
}

// A task's completion reads every key at most once, for a plain step and
// for a reconcilable one (its reconciliation record), from the cache and
// from the store alike.
func scenarioReads_ATaskCompletionReadsEveryKeyAtMostOnce(t *testing.T, b *bundle) {
	counter := newReadCounter(b.store)
	b = setupWith(t, counter)
	b.submit(seq("a", "b", "c"))
	ta := b.poll("act-a")
	gets, scans := counter.during(func() { b.complete(ta, `{"a":1}`) })
	requireEachReadOnce(t, gets, scans)

	tb := b.pollVerifiable("act-b")[0]
	gets, scans = counter.during(func() { b.complete(tb, `{"b":1}`) })
	requireEachReadOnce(t, gets, scans)

	tc := b.poll("act-c")
	b.restart() // nothing cached: the checkpoint, the run and the task come from the store
	gets, scans = counter.during(func() { b.complete(tc, `{"c":1}`) })
	requireEachReadOnce(t, gets, scans)
	require.NotEmpty(t, gets, "the completion read the store")
}
