package acceptance

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

func commit(t *testing.T, st store.Store, ops ...store.Op) {
	t.Helper()
	_, err := st.Commit(context.Background(), &store.Batch{Ops: ops})
	require.NoError(t, err)
}

// TestPriorSignal_NewDuplicateOrIndeterminate is the table of what an
// earlier acceptance left: nothing (new), both records (the first
// response), or the payload alone (indeterminate, never enqueued again).
func TestPriorSignal_NewDuplicateOrIndeterminate(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})

	prior, err := PriorSignal(ctx, st, "r", "go", "1")
	require.NoError(t, err)
	require.Nil(t, prior, "a new signal")

	first := Signal{Accepted: true, RunID: "r", SignalName: "go", SignalID: "1", AcceptedAt: time.Unix(5, 0).UTC(),
		SignalStorageKey: string(PayloadKey("r", "go", "1"))}
	rec, err := json.Marshal(Record{FormatVersion: 1, RunID: "r", SignalName: "go", SignalID: "1", Response: first})
	require.NoError(t, err)
	commit(t, st, store.Put(PayloadKey("r", "go", "1"), []byte("null")), store.Put(RecordKey("r", "go", "1"), rec))
	prior, err = PriorSignal(ctx, st, "r", "go", "1")
	require.NoError(t, err)
	require.Equal(t, &first, prior, "a duplicate answers the first response")

	commit(t, st, store.Put(PayloadKey("r", "go", "2"), []byte("null")))
	_, err = PriorSignal(ctx, st, "r", "go", "2")
	require.True(t, errors.Is(err, ErrIndeterminate), "payload without its record: %v", err)
}

// TestExpiredAt_OnlyEntriesDueAndReadable: retention sees the entries
// expired at now, and skips a key it cannot read.
func TestExpiredAt_OnlyEntriesDueAndReadable(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	now := time.Unix(1000, 0)
	commit(t, st,
		store.Put(ExpiryKey(now.Add(-time.Second), "r", "go", "1"), nil),
		store.Put(ExpiryKey(now.Add(time.Second), "r", "go", "2"), nil),
		store.Put(keyspace.SignalExpiry.Key(store.Time(now.Add(-time.Hour)), "r"), nil))
	got, err := ExpiredAt(ctx, st, now)
	require.NoError(t, err)
	require.Equal(t, []Expired{{IndexKey: ExpiryKey(now.Add(-time.Second), "r", "go", "1"), RunID: "r", Name: "go", ID: "1"}}, got)
}
