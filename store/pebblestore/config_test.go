package pebblestore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

func TestConfig_CacheBytesMustBePositive(t *testing.T) {
	t.Parallel()
	_, err := pebblestore.Open(t.TempDir(), pebblestore.Config{CacheBytes: -1})
	require.ErrorContains(t, err, "cache bytes must be at least 1")
}

// Pebble reserves its memtables' memory in its block cache; the default
// cache must still hold blocks once the memtables are at full size.
func TestConfig_CacheBytesAreLeftForBlocksBesideTheMemtables(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	value := make([]byte, 1024)
	key := func(i int) []byte { return store.Key("k", fmt.Sprintf("%06d", i)) }
	const n = 16 * 1024 // 16 MiB of values: memtables at full size, and tables
	for lo := 0; lo < n; lo += 1024 {
		batch := &store.Batch{}
		for i := lo; i < lo+1024; i++ {
			batch.Ops = append(batch.Ops, store.Put(key(i), value))
		}
		require.NoError(t, commitOne(t, b.s, batch))
	}
	// Everything in the last level first: a compaction running during the
	// reads would drop the blocks of the tables it replaces from the cache.
	_, err := pebblestore.CompactAll(b.s)
	require.NoError(t, err)
	read := func() {
		for i := 0; i < n/4; i += 4 { // 4 MiB of blocks, half the default cache
			_, err := b.s.Get(t.Context(), key(i))
			require.NoError(t, err)
		}
	}
	read()
	_, hits0, misses0 := pebblestore.BlockCache(b.s)
	read()
	size, hits, misses := pebblestore.BlockCache(b.s)
	require.Greater(t, size, int64(pebblestore.DefaultCacheBytes/4), "the cache holds the blocks read")
	require.Greater(t, hits-hits0, misses-misses0, "the second pass reads from the cache")
}

// Tables that do not overlap (a bulk load's, written in key order, split by
// Pebble's flushes) must leave L0 once it holds L0CompactionFiles of them,
// instead of piling up to Pebble's default of 500 for a later workload to
// pay for (docs/performance.md, "Scale"). The store's own batches never
// make such tables in a test of reasonable size (every flush also holds the
// version counter, so its tables overlap and L0's sublevels compact them),
// so this checks the option the store opens Pebble with.
func TestConfig_L0CompactsPastAFewDisjointTables(t *testing.T) {
	t.Parallel()
	opts := pebblestore.PebbleOptions(pebblestore.Config{})
	require.Equal(t, pebblestore.L0CompactionFiles, opts.L0CompactionFileThreshold)
	require.Less(t, pebblestore.L0CompactionFiles, 500, "below Pebble's default")
}
