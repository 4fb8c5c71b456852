package redisbus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/export/redisbus"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/store"
)

const tenant = "tenant-a"

// testPrefix answers a stream-name prefix only this test uses; its streams
// are deleted when the test ends.
func testPrefix(t *testing.T, rdb *redis.Client) string {
	return redistest.Prefix(t, rdb) + "events:"
}

// ref identifies an event by (run_id, run_seq) and by event_id.
type ref struct {
	run string
	seq uint64
	id  string
}

func eventID(run string, seq uint64) string { return fmt.Sprintf("ev-%s-%d", run, seq) }

// writeOutbox writes runs × seqs events and their outbox entries as the
// engine does (references to the events), the runs named with prefix.
func writeOutbox(t *testing.T, st store.Store, prefix string, runs, seqs int) []ref {
	t.Helper()
	var refs []ref
	b := &store.Batch{}
	for r := range runs {
		run := fmt.Sprintf("%s-%04d", prefix, r)
		for s := uint64(1); s <= uint64(seqs); s++ {
			ev := runstate.Event{Type: runstate.EvStepCompleted, ID: eventID(run, s), RunID: run, Seq: s}
			b.Ops = append(b.Ops, store.Put(keyspace.Run.Key(run, "ev", store.Uint64(s)), runcodec.AppendEvent(nil, &ev)),
				store.Put(export.OutboxKey(run, s), runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: tenant})))
			refs = append(refs, ref{run, s, eventID(run, s)})
			if len(b.Ops) >= 500 {
				_, err := st.Commit(context.Background(), b)
				require.NoError(t, err)
				b = &store.Batch{}
			}
		}
	}
	if len(b.Ops) > 0 {
		_, err := st.Commit(context.Background(), b)
		require.NoError(t, err)
	}
	return refs
}

// readStream answers every entry of a stream, parsed.
func readStream(t *testing.T, rdb *redis.Client, stream string) []export.Message {
	t.Helper()
	entries, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
	require.NoError(t, err)
	var out []export.Message
	for _, e := range entries {
		m, err := redisbus.ParseMessage(e.Values)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// requireDelivered checks that every ref is among msgs, with its event id.
func requireDelivered(t *testing.T, refs []ref, msgs []export.Message) {
	t.Helper()
	got := map[ref]bool{}
	ids := map[string]bool{}
	for _, m := range msgs {
		got[ref{m.RunID, m.RunSeq, m.EventID}] = true
		ids[m.EventID] = true
	}
	for _, r := range refs {
		require.True(t, got[r], "event %s/%d (%s) was never delivered", r.run, r.seq, r.id)
		require.True(t, ids[r.id])
	}
}

func outboxLen(t *testing.T, st store.Store) int {
	t.Helper()
	n := 0
	params := &store.ScanParams{Prefix: runlog.OutboxPrefix(), Limit: store.MaxScanLimit}
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

// outboxEvents counts the events the outbox entries name (an entry names
// the events one decision appended, a run's entry its run's from its first).
func outboxEvents(t *testing.T, st store.Store) int {
	t.Helper()
	n := 0
	params := &store.ScanParams{Prefix: runlog.OutboxPrefix(), Limit: store.MaxScanLimit}
	for {
		page, err := st.Scan(context.Background(), params)
		require.NoError(t, err)
		resolved, err := runlog.ResolveOutbox(context.Background(), st, page.Items)
		require.NoError(t, err)
		var reqs []runlog.RunRequest // the runs' entries, which ResolveOutbox leaves
		for i, e := range resolved {
			if runlog.IsRunEntry(page.Items[i].Value) {
				entry, err := runlog.ParseRunEntry(page.Items[i])
				require.NoError(t, err)
				reqs = append(reqs, runlog.RunRequest{RunID: entry.RunID, TenantID: entry.TenantID, From: entry.From})
				continue
			}
			require.NoError(t, e.Err)
			n += len(e.Events)
		}
		runs, err := (*runlog.OutboxCache)(nil).ResolveRuns(context.Background(), st, reqs)
		require.NoError(t, err)
		for _, r := range runs {
			require.NoError(t, r.Err)
			n += len(r.Events)
		}
		if page.Next == nil {
			return n
		}
		params.After = page.Next
	}
}
