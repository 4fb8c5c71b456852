package ownership

import (
	"errors"
	"testing"

	"github.com/weft-dev/weft/store"
)

// TestTenure_FenceRefusesAnEpochItDidNotBump: the first read records the
// epoch; only the tenure's own bump may move it, any other move is stale.
func TestTenure_FenceRefusesAnEpochItDidNotBump(t *testing.T) {
	var tn Tenure
	if err := tn.Fence(4); err != nil {
		t.Fatalf("first read: %v", err)
	}
	if err := tn.Fence(4); err != nil {
		t.Fatalf("same epoch: %v", err)
	}
	if !tn.MustBump() {
		t.Fatal("a tenure that never wrote must bump")
	}
	if err := tn.Fence(5); !errors.Is(err, ErrStale) {
		t.Fatalf("epoch moved by another engine: got %v, want ErrStale", err)
	}
	tn.Bumped(5)
	if tn.MustBump() {
		t.Fatal("a tenure bumps once")
	}
	if err := tn.Fence(5); err != nil {
		t.Fatalf("its own bump: %v", err)
	}
	if err := tn.Fence(6); !errors.Is(err, ErrStale) {
		t.Fatalf("moved after its bump: got %v, want ErrStale", err)
	}
}

// TestCheck_ModeNeedsItsCapability is the fail-fast table.
func TestCheck_ModeNeedsItsCapability(t *testing.T) {
	for _, c := range []struct {
		mode    Mode
		cas     bool
		wantErr bool
	}{
		{SingleOwner, false, false}, {SingleOwner, true, false},
		{CASRequired, true, false}, {CASRequired, false, true},
		{"other", true, true},
	} {
		err := Check(c.mode, store.Capabilities{ConditionalBatch: c.cas, Backend: "x"})
		if (err != nil) != c.wantErr {
			t.Errorf("%s cas=%v: got %v", c.mode, c.cas, err)
		}
		var ce *CapabilityError
		if c.mode == CASRequired && !c.cas && !errors.As(err, &ce) {
			t.Errorf("cas-required without CAS: got %T, want *CapabilityError", err)
		}
	}
}
