package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

const tenant = "tenant-a"

// backend opens a fresh store of one kind.
type backend struct {
	name string
	open func(t *testing.T) store.Store
}

var backends = []backend{
	{"memory", func(t *testing.T) store.Store {
		s := memstore.New(memstore.Config{})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"pebble", func(t *testing.T) store.Store {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"postgresql", func(t *testing.T) store.Store {
		return sqltest.Open(t, sqltest.NewSchema(t))
	}},
}

func memStore(t *testing.T) store.Store { return backends[0].open(t) }

// newFakeClock answers a clock tests move by hand.
func newFakeClock() *clock.Manual {
	return clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// ref identifies an event for the checks.
type ref struct {
	run string
	seq uint64
}

func eventID(run string, seq uint64) string { return fmt.Sprintf("ev-%s-%d", run, seq) }

// payloadMarker is in every event's payload, so tests can prove that logs
// and records carry none.
const payloadMarker = "SECRET-PAYLOAD"

// writeOutbox writes entries for runs × seqs as the engine does: each event
// under wf:{run}:ev:{seq} and a reference to it under ob:{run}:{seq}. It
// answers every ref written.
func writeOutbox(t testing.TB, st store.Store, runs, seqs int) []ref {
	t.Helper()
	var refs []ref
	b := &store.Batch{}
	flush := func() {
		if len(b.Ops) > 0 {
			_, err := st.Commit(context.Background(), b)
			require.NoError(t, err)
			b = &store.Batch{}
		}
	}
	for r := range runs {
		run := fmt.Sprintf("run-%04d", r)
		for s := 1; s <= seqs; s++ {
			refs = append(refs, ref{run, uint64(s)})
			b.Ops = append(b.Ops, entryOps(t, run, uint64(s))...)
			if len(b.Ops) >= 500 {
				flush()
			}
		}
	}
	flush()
	return refs
}

// testEvent is the event ref (run, seq) names.
func testEvent(run string, seq uint64) runstate.Event {
	return runstate.Event{Type: runstate.EvStepCompleted, ID: eventID(run, seq), RunID: run, Seq: seq,
		StepID: "a", PlanVersion: "1", EmittedAt: time.Now().UTC().Truncate(time.Millisecond),
		Data: runstate.EventData{Output: json.RawMessage(`"` + payloadMarker + `"`)}}
}

// entryOps are the writes of one event and its outbox entry, as the engine
// makes them (engine/eventlog.go).
func entryOps(t testing.TB, run string, seq uint64) []store.Op {
	ev := testEvent(run, seq)
	return []store.Op{store.Put(keyspace.Run.Key(run, "ev", store.Uint64(seq)), runcodec.AppendEvent(nil, &ev)),
		store.Put(export.OutboxKey(run, seq), outboxValue(t, run, seq))}
}

// outboxValue is the outbox entry of (run, seq) as the engine writes it: a
// reference to the event.
func outboxValue(_ testing.TB, _ string, _ uint64) []byte {
	return runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: tenant})
}

// legacyOutboxValue is the outbox entry of (run, seq) as an older weftd
// wrote it: OutboxEntry JSON holding a copy of the event.
func legacyOutboxValue(t testing.TB, run string, seq uint64) []byte {
	body, err := json.Marshal(testEvent(run, seq))
	require.NoError(t, err)
	v, err := json.Marshal(runlog.OutboxEntry{TenantID: tenant, Event: body})
	require.NoError(t, err)
	return v
}

// requireAllDelivered checks that every ref reached the bus at least once,
// with its event id and payload, and that the outbox is empty.
func requireAllDelivered(t *testing.T, st store.Store, refs []ref, msgs []export.Message) (duplicates int) {
	t.Helper()
	got := map[ref]int{}
	ids := map[string]bool{}
	for _, m := range msgs {
		r := ref{m.RunID, m.RunSeq}
		got[r]++
		ids[m.EventID] = true
		require.Equal(t, eventID(m.RunID, m.RunSeq), m.EventID)
		require.Equal(t, tenant, m.TenantID)
		require.Contains(t, string(m.Event), payloadMarker)
	}
	for _, r := range refs {
		require.NotZero(t, got[r], "event %s/%d was never delivered", r.run, r.seq)
		require.True(t, ids[eventID(r.run, r.seq)], "event id of %s/%d was never delivered", r.run, r.seq)
	}
	require.Len(t, got, len(refs), "no event beyond those written")
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()), "outbox drained")
	require.Zero(t, countPrefix(t, st, export.RetryPrefix()), "no retry record left behind")
	return len(msgs) - len(refs)
}

func countPrefix(t *testing.T, st store.Store, prefix []byte) int {
	t.Helper()
	n := 0
	params := &store.ScanParams{Prefix: prefix, Limit: store.MaxScanLimit}
	for {
		page, err := st.Scan(context.Background(), params)
		require.NoError(t, err)
		n += len(page.Items)
		if page.Next == nil {
			return n
		}
		params.After = page.Next
	}
}

// drain runs passes until the outbox is empty.
func drain(t *testing.T, w *export.Worker) {
	t.Helper()
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "outbox never drained")
		stats, err := w.RunOnce(context.Background())
		require.NoError(t, err)
		if stats.Seen == 0 {
			return
		}
	}
}

// logBuffer is a JSON slog sink tests read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		out = append(out, m)
	}
	return out
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLogger(l *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// metricValue answers the value of the counter or gauge series of name
// whose labels include labels, as the registry serves it; there must be one.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			match := true
			for k, v := range labels {
				match = match && got[k] == v
			}
			if !match {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			require.NotNil(t, m.GetGauge(), "%s is neither a counter nor a gauge", name)
			return m.GetGauge().GetValue()
		}
	}
	require.Failf(t, "no such series", "%s%v", name, labels)
	return 0
}
