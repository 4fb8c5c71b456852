package retention

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// fakeRun records what a batch does, and applies its deletions to the
// store when the batch "commits".
type fakeRun struct {
	finished, hidden bool
	deleted          [][]byte
	derived          int
	reindexed        *time.Time
	hides, finishes  int
}

func (r *fakeRun) Finished() bool                 { return r.finished }
func (r *fakeRun) Hidden() bool                   { return r.hidden }
func (r *fakeRun) Require(store.Condition)        {}
func (r *fakeRun) Delete(key []byte)              { r.deleted = append(r.deleted, key) }
func (r *fakeRun) Derived(_, _ []byte)            { r.derived++ }
func (r *fakeRun) Reindex(_ []byte, at time.Time) { r.reindexed = &at }
func (r *fakeRun) Hide()                          { r.hidden = true; r.hides++ }
func (r *fakeRun) Finish([]byte)                  { r.finishes++ }

func (r *fakeRun) commit(t *testing.T, st store.Store) {
	t.Helper()
	ops := make([]store.Op, 0, len(r.deleted))
	for _, k := range r.deleted {
		ops = append(ops, store.Delete(k))
	}
	if _, err := st.Commit(context.Background(), &store.Batch{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	r.deleted = nil
}

func fill(t *testing.T, st store.Store, prefixes [][]byte, perPrefix int) {
	t.Helper()
	var ops []store.Op
	for _, p := range prefixes {
		for i := range perPrefix {
			ops = append(ops, store.Put(append(append([]byte{}, p...), fmt.Sprintf("%05d", i)...), []byte("v")))
		}
	}
	if _, err := st.Commit(context.Background(), &store.Batch{Ops: ops}); err != nil {
		t.Fatal(err)
	}
}

// TestBatch_RemovesEveryOwnedRecordInBoundedBatches: a run with more
// records than several batches delete goes in batches of at most BatchKeys,
// each starting where the previous stopped (no key deleted twice), hidden
// once, finished once with the last batch, and nothing of it left.
func TestBatch_RemovesEveryOwnedRecordInBoundedBatches(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	recs := Records{Owned: [][]byte{store.KeyPrefix("a", "r1"), store.KeyPrefix("b", "r1"), store.KeyPrefix("c", "r1")},
		Outbox: keyspace.Outbox.KeyPrefix("r1")}
	fill(t, st, recs.Owned, 700) // 2,100 records: five batches
	fill(t, st, [][]byte{store.KeyPrefix("a", "r2")}, 3)
	index := ExpiryKey(time.Unix(0, 0), "r1")
	r := &fakeRun{finished: true}
	seen := map[string]bool{}
	var from Cursor
	batches := 0
	for {
		step, next, err := Batch(ctx, st, r, recs, index, from, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		batches++
		if len(r.deleted) > BatchKeys {
			t.Fatalf("batch %d deleted %d keys, more than %d", batches, len(r.deleted), BatchKeys)
		}
		for _, k := range r.deleted {
			if seen[string(k)] {
				t.Fatalf("key %q deleted twice", k)
			}
			seen[string(k)] = true
		}
		r.commit(t, st)
		from = next
		if step == Gone {
			break
		}
		if step != GoesOn || batches > 10 {
			t.Fatalf("batch %d: step %d", batches, step)
		}
	}
	if len(seen) != 2100 || r.derived != 2100 || r.hides != 1 || r.finishes != 1 || batches != 5 {
		t.Fatalf("deleted %d, derived %d, hidden %d, finished %d times, in %d batches", len(seen), r.derived, r.hides, r.finishes, batches)
	}
	for _, p := range recs.Owned {
		res, _ := st.Scan(ctx, &store.ScanParams{Prefix: p})
		if len(res.Items) != 0 {
			t.Fatalf("%q keeps %d records", p, len(res.Items))
		}
	}
	res, _ := st.Scan(ctx, &store.ScanParams{Prefix: store.KeyPrefix("a", "r2")})
	if len(res.Items) != 3 {
		t.Fatalf("another run lost records: %d left", len(res.Items))
	}
}

// TestBatch_WaitsForExportAndNeverRemovesAnUnfinishedRun: a run whose
// events wait in the outbox moves its entry ExportWait later and loses
// nothing; a run that is not finished only loses the stray entry.
func TestBatch_WaitsForExportAndNeverRemovesAnUnfinishedRun(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	recs := Records{Owned: [][]byte{store.KeyPrefix("a", "r1")}, Outbox: keyspace.Outbox.KeyPrefix("r1")}
	fill(t, st, append(recs.Owned, recs.Outbox), 2)
	index, now := ExpiryKey(time.Unix(0, 0), "r1"), time.Unix(100, 0)

	r := &fakeRun{finished: true}
	step, _, err := Batch(ctx, st, r, recs, index, Cursor{}, now)
	if err != nil || step != Waits || len(r.deleted) != 0 || r.hides != 0 || r.reindexed == nil || !r.reindexed.Equal(now.Add(ExportWait)) {
		t.Fatalf("export pending: step %d err %v deleted %d hidden %d reindexed %v", step, err, len(r.deleted), r.hides, r.reindexed)
	}

	r = &fakeRun{finished: false}
	step, _, err = Batch(ctx, st, r, recs, index, Cursor{}, now)
	if err != nil || step != Waits || len(r.deleted) != 1 || string(r.deleted[0]) != string(index) || r.hides != 0 {
		t.Fatalf("unfinished run: step %d err %v deleted %q", step, err, r.deleted)
	}
}

// TestExpiredAt_AnswersOnlyEntriesDueAndReadable: the pass sees the entries
// expired at now, oldest first, and skips a key it cannot read.
func TestExpiredAt_AnswersOnlyEntriesDueAndReadable(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	now := time.Unix(1000, 0)
	ops := []store.Op{
		store.Put(ExpiryKey(now.Add(-time.Second), "old"), nil),
		store.Put(ExpiryKey(now, "due"), nil),
		store.Put(ExpiryKey(now.Add(time.Millisecond), "later"), nil),
		store.Put(keyspace.Expiry.Key(store.Time(now.Add(-time.Hour))), nil), // not a run's entry
	}
	if _, err := st.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	got, err := ExpiredAt(ctx, st, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RunID != "old" || got[1].RunID != "due" {
		t.Fatalf("got %+v", got)
	}
}

// TestBatch_WaitsForARunsOwnOutboxEntry: a run's one outbox entry,
// ob:{run}: — its outbox prefix itself — holds its removal back as an
// older weftd's entries under that prefix do, on every store.
func TestBatch_WaitsForARunsOwnOutboxEntry(t *testing.T) {
	ctx := context.Background()
	for name, st := range map[string]store.Store{
		"memory":     memstore.New(memstore.Config{}),
		"postgresql": sqltest.Open(t, sqltest.NewSchema(t)),
	} {
		recs := Records{Owned: [][]byte{store.KeyPrefix("a", "r1")}, Outbox: keyspace.Outbox.KeyPrefix("r1")}
		_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(keyspace.Outbox.KeyPrefix("r1"), []byte{0x0a}),
			store.Put(keyspace.Outbox.KeyPrefix("r10"), []byte{0x0a})}})
		if err != nil {
			t.Fatal(err)
		}
		index, now := ExpiryKey(time.Unix(0, 0), "r1"), time.Unix(100, 0)
		r := &fakeRun{finished: true}
		step, _, err := Batch(ctx, st, r, recs, index, Cursor{}, now)
		if err != nil || step != Waits || r.hides != 0 {
			t.Fatalf("%s: the run's entry pending: step %d err %v hidden %d", name, step, err, r.hides)
		}
		recs.Outbox = keyspace.Outbox.KeyPrefix("r2") // another run's entries hold nothing back
		r = &fakeRun{finished: true}
		if step, _, err = Batch(ctx, st, r, recs, index, Cursor{}, now); err != nil || step == Waits {
			t.Fatalf("%s: no entry of its own: step %d err %v", name, step, err)
		}
	}
}
