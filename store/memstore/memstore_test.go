package memstore_test

import (
	"testing"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		s := memstore.New(memstore.Config{})
		t.Cleanup(func() { _ = s.Close() })
		return &storetest.Instance{Store: s}
	}})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(testing.TB) store.Store { return memstore.New(memstore.Config{}) }, nil)
}
