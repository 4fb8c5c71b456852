package server

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// benchStores are the stores the audit benchmarks run on: memory, Pebble
// (every commit synced) and the local PostgreSQL (sqltest: skipped without
// it).
var benchStores = []struct {
	name string
	open func(b *testing.B) store.Store
}{
	{"memstore", func(b *testing.B) store.Store {
		st := memstore.New(memstore.Config{})
		b.Cleanup(func() { _ = st.Close() })
		return st
	}},
	{"pebble", func(b *testing.B) store.Store {
		st, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	}},
	{"postgres", func(b *testing.B) store.Store { return sqltest.Open(b, sqltest.NewSchema(b)) }},
}

// countingStore counts the commits (each one synced on a durable store).
type countingStore struct {
	store.Store
	commits atomic.Int64
}

func (s *countingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.commits.Add(1)
	return s.Store.Commit(ctx, b)
}

// benchAudit runs call b.N times over Connect against a server on each
// store, with the audit log off and on (the record riding the action's
// batch, or one write of its own for a call that commits nothing).
func benchAudit(b *testing.B, setup func(b *testing.B, c apitest.Clients) func(i int) error) {
	for _, s := range benchStores {
		for _, withAudit := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/audit=%t", s.name, withAudit), func(b *testing.B) {
				st := &countingStore{Store: s.open(b)}
				cfg := engineConfigOn(b, st)
				if withAudit {
					cfg.Audit = audit.New(st, nil)
				}
				c := apitest.NewClients(testServer(b, cfg), apitest.Protocols[1])
				call := setup(b, c)
				i := 0
				st.commits.Store(0)
				for b.Loop() {
					if err := call(i); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(st.commits.Load())/float64(i), "commits/op")
			})
		}
	}
}

// BenchmarkAudit_SubmitRun measures a submission with and without the
// audit log.
func BenchmarkAudit_SubmitRun(b *testing.B) {
	benchAudit(b, func(b *testing.B, c apitest.Clients) func(int) error {
		req := &weftv1.SubmitRunRequest{Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}
		return func(int) error {
			_, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(req))
			return err
		}
	})
}

// BenchmarkAudit_SignalRun measures an accepted signal (a new signal id
// each time, to a run that keeps waiting) with and without the audit log.
func BenchmarkAudit_SignalRun(b *testing.B) {
	benchAudit(b, func(b *testing.B, c apitest.Clients) func(int) error {
		res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
			Definition: def(&weftv1.Action{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}})}))
		if err != nil {
			b.Fatal(err)
		}
		runID := res.Msg.GetRun().GetRunId()
		return func(i int) error {
			_, err := c.Signals.SignalRun(context.Background(), connect.NewRequest(&weftv1.SignalRunRequest{
				RunId: runID, SignalName: "note", SignalId: proto.String(fmt.Sprintf("note-%d", i))}))
			return err
		}
	})
}
