package memstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

func TestGetMany_FallsBackToGetOnAStoreWithoutMultiGet(t *testing.T) {
	st := memstore.New(memstore.Config{})
	ctx := context.Background()
	_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put([]byte("k:a"), []byte("1")), store.Put([]byte("k:b"), []byte("2"))}})
	require.NoError(t, err)
	items, err := store.GetMany(ctx, st, [][]byte{[]byte("k:b"), []byte("k:x"), []byte("k:a")})
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, "k:b", string(items[0].Key))
	require.Equal(t, "1", string(items[1].Value))
}
