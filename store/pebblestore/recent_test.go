package pebblestore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecentVersions_HoldAtMostTheirCapacityAndForgetTheOldestFirst(t *testing.T) {
	t.Parallel()
	rv := newRecentVersions(3)
	rv.note("a", 1)
	rv.note("b", 2)
	rv.note("c", 0)
	rv.note("a", 4) // held: updated in place, still the oldest
	found, version, held := rv.get([]byte("a"))
	require.True(t, found && held)
	require.EqualValues(t, 4, version)
	found, _, held = rv.get([]byte("c"))
	require.True(t, held, "a deleted key is held as absent")
	require.False(t, found)

	rv.note("d", 5)
	_, _, held = rv.get([]byte("a"))
	require.False(t, held, "the oldest key is forgotten first")
	for _, k := range []string{"b", "c", "d"} {
		_, _, held = rv.get([]byte(k))
		require.True(t, held, k)
	}
	rv.note("e", 6)
	_, _, held = rv.get([]byte("b"))
	require.False(t, held)
	require.Len(t, rv.versions, 3)

	rv.forget()
	for _, k := range []string{"c", "d", "e"} {
		_, _, held = rv.get([]byte(k))
		require.False(t, held, k)
	}
	rv.note("f", 7)
	_, version, held = rv.get([]byte("f"))
	require.True(t, held)
	require.EqualValues(t, 7, version)
}
