package engine

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

// A key written more than once in a decision is written once, as it was
// last, whether the decision wrote a few keys or many.
func TestAppendLastWrites_KeepsEachKeysLastWriteInTheOrderOfLastWrites(t *testing.T) {
	for _, n := range []int{3, 100} {
		var ops, want []store.Op
		for i := range n {
			ops = append(ops, store.Put(fmt.Appendf(nil, "k%d", i), []byte("first")))
		}
		ops = append(ops, store.Delete([]byte("k1")), store.Put([]byte("k0"), []byte("last")))
		for i := 2; i < n; i++ {
			want = append(want, store.Put(fmt.Appendf(nil, "k%d", i), []byte("first")))
		}
		want = append(want, store.Delete([]byte("k1")), store.Put([]byte("k0"), []byte("last")))
		prefix := []store.Op{store.Put([]byte("ckpt"), nil)}
		require.Equal(t, append(prefix, want...), appendLastWrites(prefix, ops), "%d keys", n)
	}
}

// An event's id is a random version 4 UUID in its canonical lowercase form
// (the form the binary event stores as its 16 bytes).
func TestNewEventID_IsACanonicalRandomVersion4UUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := newEventID()
		u, err := uuid.Parse(id)
		require.NoError(t, err)
		require.Equal(t, uuid.Version(4), u.Version())
		require.Equal(t, uuid.RFC4122, u.Variant())
		require.Equal(t, u.String(), id)
		require.False(t, seen[id])
		seen[id] = true
	}
}
