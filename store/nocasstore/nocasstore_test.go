package nocasstore_test

import (
	"testing"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store/nocasstore"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		s := nocasstore.New()
		t.Cleanup(func() { _ = s.Close() })
		return &storetest.Instance{Store: s}
	}})
}
