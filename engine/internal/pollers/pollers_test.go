package pollers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// TestMerge_OneWorkerInSeveralProcessesIsOnePoller: its latest poll, the
// sum of its tasks, the union of its names, sorted by kind; workers of a
// queue by worker id.
func TestMerge_OneWorkerInSeveralProcessesIsOnePoller(t *testing.T) {
	at := time.Unix(100, 0)
	got := Merge([]Record{
		{TenantID: "t", Queue: "q", WorkerID: "w2", Process: "p1", LastPoll: at, InFlight: 1, Names: []string{"a:x"}},
		{TenantID: "t", Queue: "q", WorkerID: "w1", Process: "p1", LastPoll: at, InFlight: 2, Names: []string{"a:y", "v:y"}},
		{TenantID: "t", Queue: "q", WorkerID: "w1", Process: "p2", LastPoll: at.Add(time.Second), Polling: true, InFlight: 3,
			Names: []string{"c:undo", "a:y"}},
		{TenantID: "t", Queue: "other", WorkerID: "w1", Process: "p1", LastPoll: at},
	})
	require.Equal(t, map[Ref][]Info{
		{Tenant: "t", Queue: "q"}: {
			{WorkerID: "w1", LastPoll: at.Add(time.Second), Polling: true, InFlight: 5,
				Activities: []string{"y"}, Compensations: []string{"undo"}, Verifiable: []string{"y"}},
			{WorkerID: "w2", LastPoll: at, InFlight: 1, Activities: []string{"x"}, Compensations: []string{}, Verifiable: []string{}},
		},
		{Tenant: "t", Queue: "other"}: {
			{WorkerID: "w1", LastPoll: at, Activities: []string{}, Compensations: []string{}, Verifiable: []string{}},
		},
	}, got)
}

func put(t *testing.T, st store.Store, r Record) {
	t.Helper()
	v, err := json.Marshal(r)
	require.NoError(t, err)
	_, err = st.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(Key(r.TenantID, r.Queue, r.WorkerID, r.Process), v)}})
	require.NoError(t, err)
}

// TestLiveAndSweep_OnlyUnexpiredRecordsOfOtherProcessesAreListed, and
// only expired ones of this format are swept: a newer weftd's record is
// neither listed nor swept.
func TestLiveAndSweep_OnlyUnexpiredRecordsOfOtherProcessesAreListed(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	now := time.Unix(1000, 0)
	put(t, st, Record{FormatVersion: 1, TenantID: "t", Queue: "q", WorkerID: "live", Process: "p2", ExpiresAt: now.Add(time.Second)})
	put(t, st, Record{FormatVersion: 1, TenantID: "t", Queue: "q", WorkerID: "mine", Process: "self", ExpiresAt: now.Add(time.Second)})
	put(t, st, Record{FormatVersion: 1, TenantID: "t", Queue: "q", WorkerID: "expired", Process: "p2", ExpiresAt: now})
	put(t, st, Record{FormatVersion: 2, TenantID: "t", Queue: "q", WorkerID: "newer", Process: "p3", ExpiresAt: now.Add(-time.Hour)})
	put(t, st, Record{FormatVersion: 1, TenantID: "u", Queue: "q", WorkerID: "other-tenant", Process: "p2", ExpiresAt: now.Add(time.Second)})

	recs, err := Live(ctx, st, "t", "q", "self", 1, now, 100)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, "live", recs[0].WorkerID)
	all, err := Live(ctx, st, "", "", "self", 1, now, 100)
	require.NoError(t, err)
	require.Len(t, all, 2, "every tenant's live records")

	require.NoError(t, Sweep(ctx, st, 1, now))
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: keyspace.Poller.KeyPrefix()})
	require.NoError(t, err)
	var left []string
	for _, it := range res.Items {
		var r Record
		require.NoError(t, json.Unmarshal(it.Value, &r))
		left = append(left, r.WorkerID)
	}
	require.ElementsMatch(t, []string{"live", "mine", "newer", "other-tenant"}, left)
}
