package pebblestore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store/pebblestore"
)

func TestConfig_CacheBytesSizesPebblesBlockCache(t *testing.T) {
	t.Parallel()
	require.EqualValues(t, pebblestore.DefaultCacheBytes, pebblestore.CacheSize(pebblestore.Config{}))
	require.EqualValues(t, 64<<20, pebblestore.CacheSize(pebblestore.Config{CacheBytes: 64 << 20}))
	_, err := pebblestore.Open(t.TempDir(), pebblestore.Config{CacheBytes: -1})
	require.ErrorContains(t, err, "cache bytes must be at least 1")
}
