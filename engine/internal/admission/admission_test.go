package admission

import (
	"context"
	"strings"
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

// TestOldest_QueuedRunsByPriorityThenInTheOrderTheyWereQueued: the
// reconciler sees priority 1's runs first, then 2's, the default lane (3,
// where entries from before priorities are), 4 and 5, each oldest first;
// an entry's value names its key's slots.
func TestOldest_QueuedRunsByPriorityThenInTheOrderTheyWereQueued(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	at := time.Unix(100, 0)
	key := KeyLimit("t", "p", "customer-1", 2)
	ops := []store.Op{
		store.Put(QueuedKey(3, at.Add(2*time.Second), "c"), QueuedValue("c", nil)),
		store.Put(QueuedKey(0, at, "a"), QueuedValue("a", &key)),
		store.Put(QueuedKey(3, at.Add(time.Second), "b"), QueuedValue("b", nil)),
		store.Put(QueuedKey(5, at, "e5"), QueuedValue("e5", nil)),
		store.Put(QueuedKey(1, at.Add(9*time.Second), "p1"), QueuedValue("p1", nil)),
		store.Put(QueuedKey(2, at.Add(time.Second), "p2b"), QueuedValue("p2b", nil)),
		store.Put(QueuedKey(2, at, "p2a"), QueuedValue("p2a", nil)),
		store.Put(QueuedKey(4, at, "d4"), QueuedValue("d4", nil)),
	}
	if _, err := st.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	got, err := Oldest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range got {
		ids = append(ids, q.RunID)
	}
	want := []string{"p1", "p2a", "p2b", "a", "b", "c", "d4", "e5"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", ids, want)
	}
	if got[3].KeySlots != string(key.Prefix) || got[4].KeySlots != "" {
		t.Fatalf("key slots: %q %q", got[3].KeySlots, got[4].KeySlots)
	}
	few, err := Waiting(ctx, st, 3)
	if err != nil || len(few) != 3 || few[2].RunID != "p2b" {
		t.Fatalf("a bounded read answers the first in order: %+v %v", few, err)
	}
}

// TestKeyLimit_AKeysSlotsAreItsOwn: a key that extends another's, or holds
// the separator, has slots of its own, and SlotKeyParts reads them back.
func TestKeyLimit_AKeysSlotsAreItsOwn(t *testing.T) {
	a, ab := KeyLimit("t", "p", "a", 1), KeyLimit("t", "p", "a:b", 1)
	slot := slotKey(ab.Prefix, 0)
	if strings.HasPrefix(string(slot), string(a.Prefix)) {
		t.Fatal("key a:b's slot falls under key a's prefix")
	}
	tenant, plan, key, ok := SlotKeyParts(slot)
	if !ok || tenant != "t" || plan != "p" || key != "a:b" {
		t.Fatalf("got %q %q %q %v", tenant, plan, key, ok)
	}
	if _, _, _, ok := SlotKeyParts(slotKey(Limits("t", "p", 1, 1)[1].Prefix, 0)); ok {
		t.Fatal("a plan limit's slot is not a key's")
	}
}
