package pebblestore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

func open(t testing.TB, dir string) store.Store {
	s, err := pebblestore.Open(dir, pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		dir := t.TempDir()
		return &storetest.Instance{Store: open(t, dir), Reopen: func(t testing.TB) store.Store { return open(t, dir) }}
	}})
}

func TestOpen_SecondProcessIsLockedOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open(t, dir)
	_, err := pebblestore.Open(dir, pebblestore.Config{})
	require.Error(t, err, "Pebble's directory lock keeps a second opener out")
}
