package sqlstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

func TestGetMany_AnswersTheKeysFoundInTheOrderAskedInOneStatement(t *testing.T) {
	db := requirePostgres(t)
	st := db.Open(t, db.NewSchema(t))
	ctx := context.Background()
	res, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{
		store.Put([]byte("k:a"), []byte("1")), store.Put([]byte("k:b"), []byte("2")), store.Put([]byte("k:c"), []byte("3"))}})
	require.NoError(t, err)

	mg, ok := any(st).(store.MultiGetter)
	require.True(t, ok, "the SQL store reads many keys in one statement")
	items, err := mg.GetMany(ctx, [][]byte{[]byte("k:c"), []byte("k:absent"), []byte("k:a")})
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, store.Item{Key: []byte("k:c"), Value: []byte("3"), Version: res.Versions[2]}, items[0])
	require.Equal(t, store.Item{Key: []byte("k:a"), Value: []byte("1"), Version: res.Versions[0]}, items[1])

	none, err := mg.GetMany(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = mg.GetMany(ctx, [][]byte{nil})
	require.Error(t, err, "an invalid key is refused as Get refuses it")
}
