package sqlstore_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

// On one connection, one-round-trip groups of every size — under the 1 KiB
// after which the connection's Frontend lets go of the room it was given,
// over it, past the room a connection keeps — each send exactly their own
// bytes, and so do the statements pgx sends on that connection between
// them, in whatever buffer the Frontend kept.
func TestGroupCommit_OneRoundTripsOfEverySizeOnOneConnectionWriteExactlyTheirBytes(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxConns: 1, MaxGroups: 1})
	ctx := context.Background()
	for i, n := range []int{10, 900, 5000, 300, 2 << 20, 50, 20000, 0, 70000, 600} {
		k := key("sized", fmt.Sprint(i))
		value := bytes.Repeat([]byte{byte('a' + i)}, n)
		res, err := b.s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(k)},
			Ops: []store.Op{store.Put(k, value), store.Delete(key("sized", "none"))}})
		require.NoError(t, err, "size %d", n)
		it, err := b.s.Get(ctx, k)
		require.NoError(t, err)
		require.Equal(t, value, it.Value, "size %d", n)
		require.Equal(t, res.Versions[0], it.Version)
		items, err := b.s.GetMany(ctx, [][]byte{k, key("sized", "none")})
		require.NoError(t, err)
		require.Len(t, items, 1)
		require.Equal(t, value, items[0].Value)
	}
	st := b.s.Stats()
	require.Equal(t, st.Groups, st.OneRoundTrip, "%+v", st)
}
