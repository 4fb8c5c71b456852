package admission

import (
	"context"
	"testing"
	"time"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// TestFreeSlots_OneFreeSlotOfEveryLimitOrTheFirstLimitReached is the
// table of limits: a slot nobody holds of each limit, or the limit that is
// reached and no slot at all.
func TestFreeSlots_OneFreeSlotOfEveryLimitOrTheFirstLimitReached(t *testing.T) {
	for _, c := range []struct {
		name                 string
		perTenant, perPlan   int
		heldTenant, heldPlan int
		wantSlots            int
		wantFull             string
	}{
		{name: "no limits", wantSlots: 0},
		{name: "both free", perTenant: 2, perPlan: 1, wantSlots: 2},
		{name: "tenant reached", perTenant: 2, perPlan: 5, heldTenant: 2, wantFull: "this tenant"},
		{name: "plan reached", perTenant: 3, perPlan: 1, heldTenant: 1, heldPlan: 1, wantFull: "plan p"},
		{name: "one left", perTenant: 3, heldTenant: 2, wantSlots: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New(memstore.Config{})
			limits := Limits("t", "p", c.perTenant, c.perPlan)
			var ops []store.Op
			for i := range c.heldTenant {
				ops = append(ops, store.Put(slotKey(limits[0].Prefix, i), []byte("run")))
			}
			for i := range c.heldPlan {
				ops = append(ops, store.Put(slotKey(limits[len(limits)-1].Prefix, i), []byte("run")))
			}
			if len(ops) > 0 {
				if _, err := st.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
					t.Fatal(err)
				}
			}
			keys, full, err := FreeSlots(ctx, st, limits)
			if err != nil {
				t.Fatal(err)
			}
			if c.wantFull != "" {
				if full == nil || full.Of != c.wantFull || keys != nil {
					t.Fatalf("want %s reached, got full=%+v keys=%q", c.wantFull, full, keys)
				}
				return
			}
			if full != nil || len(keys) != c.wantSlots {
				t.Fatalf("got full=%+v keys=%q", full, keys)
			}
			for _, k := range keys {
				if _, err := st.Get(ctx, k); err == nil {
					t.Fatalf("slot %q is held", k)
				}
			}
		})
	}
}

// TestOldest_QueuedRunsInTheOrderTheyWereQueued: the reconciler sees the
// oldest queued run first.
func TestOldest_QueuedRunsInTheOrderTheyWereQueued(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	at := time.Unix(100, 0)
	ops := []store.Op{
		store.Put(QueuedKey(at.Add(2*time.Second), "c"), []byte("c")),
		store.Put(QueuedKey(at, "a"), []byte("a")),
		store.Put(QueuedKey(at.Add(time.Second), "b"), []byte("b")),
	}
	if _, err := st.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	got, err := Oldest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].RunID != "a" || got[1].RunID != "b" || got[2].RunID != "c" {
		t.Fatalf("got %+v", got)
	}
}
