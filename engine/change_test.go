package engine

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
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

// An event's id is a version 8 UUID in its canonical lowercase form (the
// form the binary event stores as its 16 bytes), one per run and run_seq.
func TestEventID_IsACanonicalVersion8UUIDPerRunAndRunSeq(t *testing.T) {
	seen := map[string]bool{}
	for _, run := range []string{"run-01a23b29-17ff-70f4-87bd-baadf44ce17b", "run-01a23b29-17ff-70f4-87bd-baadf44ce17c"} {
		for seq := range uint64(50) {
			id := runstate.EventID(run, seq+1)
			u, err := uuid.Parse(id)
			require.NoError(t, err)
			require.Equal(t, uuid.Version(8), u.Version())
			require.Equal(t, uuid.RFC4122, u.Variant())
			require.Equal(t, u.String(), id)
			require.False(t, seen[id])
			seen[id] = true
		}
	}
}

// A new run's decision writes no key it put and then deleted (they did not
// exist before); a key put again after its delete, and a delete of a key it
// never put, stay.
func TestDropTransientWrites_ANewRunForgetsOnlyKeysItPutAndLastDeleted(t *testing.T) {
	k := func(s string) []byte { return []byte(s) }
	c := &change{newRun: true, ops: []store.Op{
		store.Put(k("pt"), nil), store.Put(k("rs:PENDING"), nil), store.Delete(k("rs:PENDING")),
		store.Put(k("rs:QUEUED"), nil), store.Delete(k("rs:QUEUED")), store.Put(k("rs:RUNNING"), nil),
		store.Delete(k("pt")), store.Delete(k("other")), store.Put(k("again"), nil), store.Delete(k("again")),
		store.Put(k("again"), []byte("x")), store.Delete(k("pt")),
	}}
	dropTransientWrites(c)
	require.Equal(t, []store.Op{store.Put(k("rs:RUNNING"), nil), store.Delete(k("other")), store.Put(k("again"), nil),
		store.Delete(k("again")), store.Put(k("again"), []byte("x"))}, c.ops)

	existing := &change{ops: []store.Op{store.Put(k("pt"), nil), store.Delete(k("pt"))}}
	dropTransientWrites(existing)
	require.Len(t, existing.ops, 2, "a run that exists may hold the key: its delete stays")
}
