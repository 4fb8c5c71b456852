package admission

import (
	"context"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// Limit is one concurrency limit that applies to a run: where its slots
// are kept, how many there are, and what it limits (for messages).
type Limit struct {
	Prefix []byte
	Size   int
	Of     string
}

// Limits answers the limits that apply to a run of plan in tenant: the
// tenant's (perTenant) and the plan's (perPlan); zero means no limit.
func Limits(tenant, plan string, perTenant, perPlan int) []Limit {
	var out []Limit
	if perTenant > 0 {
		out = append(out, Limit{Prefix: keyspace.Slot.KeyPrefix(tenant, "*"), Size: perTenant, Of: "this tenant"})
	}
	if perPlan > 0 {
		out = append(out, Limit{Prefix: keyspace.Slot.KeyPrefix(tenant, "plan", plan), Size: perPlan, Of: "plan " + plan})
	}
	return out
}

// slotKey is the i-th slot of a limit.
func slotKey(prefix []byte, i int) []byte {
	return append(append([]byte{}, prefix...), store.EscapeComponent(strconv.Itoa(i))...)
}

// FreeSlots answers a slot nobody holds of every limit, or the first limit
// that is reached (and no slots).
func FreeSlots(ctx context.Context, st store.Store, limits []Limit) ([][]byte, *Limit, error) {
	var keys [][]byte
	for i := range limits {
		key, err := freeSlot(ctx, st, limits[i])
		if err != nil {
			return nil, nil, err
		}
		if key == nil {
			return nil, &limits[i], nil
		}
		keys = append(keys, key)
	}
	return keys, nil, nil
}

// freeSlot finds a slot of l nobody holds, or nil.
func freeSlot(ctx context.Context, st store.Store, l Limit) ([]byte, error) {
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: l.Prefix, Limit: min(l.Size+1, store.MaxScanLimit)})
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	for _, it := range res.Items {
		taken[string(it.Key)] = true
	}
	for i := range l.Size {
		if k := slotKey(l.Prefix, i); !taken[string(k)] {
			return k, nil
		}
	}
	return nil, nil
}

// QueuePrefix begins the queue of QUEUED runs.
func QueuePrefix() []byte { return keyspace.RunQueue.KeyPrefix() }

// QueuedKey indexes a QUEUED run in the order it was queued; its value is
// the run id.
func QueuedKey(queuedAt time.Time, runID string) []byte {
	return keyspace.RunQueue.Key(store.Time(queuedAt), runID)
}

// QueuedRuns bounds the queued runs one reconciler pass visits.
const QueuedRuns = 256

// Queued is one queued run's entry.
type Queued struct {
	Key   []byte
	RunID string
}

// Oldest answers up to QueuedRuns queued runs, oldest first.
func Oldest(ctx context.Context, st store.Store) ([]Queued, error) {
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: QueuePrefix(), Limit: QueuedRuns})
	if err != nil {
		return nil, err
	}
	out := make([]Queued, len(res.Items))
	for i, it := range res.Items {
		out[i] = Queued{Key: it.Key, RunID: string(it.Value)}
	}
	return out, nil
}
