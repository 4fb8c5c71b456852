package cache

import (
	"fmt"
	"testing"

	"github.com/weft-dev/weft/engine/internal/record"
)

// TestPlanCache_HoldsAtMostTwoGenerationsAndKeepsWhatIsUsed: the plan
// cache never holds more than twice its size, a plan used while the older
// generation still holds it survives the next turnover, and one tenant's
// plan is never another's of the same SHA-256.
func TestPlanCache_HoldsAtMostTwoGenerationsAndKeepsWhatIsUsed(t *testing.T) {
	c := newPlanCache(4)
	kept := planID{tenant: "t", sha256: "kept"}
	c.put(kept, &record.Plan{})
	for i := range 40 {
		c.put(planID{tenant: "t", sha256: fmt.Sprint(i)}, &record.Plan{})
		if _, ok := c.get(kept); !ok {
			t.Fatalf("a plan used after every put was dropped at put %d", i)
		}
		if n := len(c.cur) + len(c.old); n > 8 {
			t.Fatalf("%d plans held, more than two generations of 4", n)
		}
	}
	if _, ok := c.get(planID{tenant: "t", sha256: "0"}); ok {
		t.Fatal("a plan unused for ten generations is still held")
	}
	if _, ok := c.get(planID{tenant: "other", sha256: "kept"}); ok {
		t.Fatal("another tenant's plan of the same SHA-256 was answered")
	}
}
