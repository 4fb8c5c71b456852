package pebblestore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// Every event's idempotency check reads a key that is absent; the tables'
// bloom filters answer most such reads without searching the table.
func TestAbsentKeyReadsAreRuledOutByBloomFilters(t *testing.T) {
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	for i := range 100 {
		_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(store.Key("k", fmt.Sprint(i)), []byte("v"))}})
		require.NoError(t, err)
	}
	flush, hits := pebblestore.FlushAndFilterHits(s)
	require.NoError(t, flush())
	before := hits()
	for i := range 100 {
		_, err := s.Get(ctx, store.Key("absent", fmt.Sprint(i)))
		require.True(t, errors.Is(err, store.ErrNotFound))
	}
	require.Greater(t, hits()-before, int64(50), "absent keys must be ruled out by the tables' filters")
}
