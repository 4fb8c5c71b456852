package admission

import (
	"bytes"
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

// KeyLimit is the limit of a plan's run concurrency key: its slots are
// slot:{tenant}:key:{plan}:{key}:{i} (docs/semantics.md#run-concurrency).
func KeyLimit(tenant, plan, key string, size int) Limit {
	return Limit{Prefix: keyspace.Slot.KeyPrefix(tenant, "key", plan, key), Size: size, Of: "concurrency key " + key}
}

// KeyPrefixes begins every run concurrency key's slots of every tenant;
// a slot key under it has the components slot, tenant, "key", plan, key
// and the slot number.
func KeyPrefixes() []byte { return keyspace.Slot.KeyPrefix() }

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

// FreeSlot answers a slot of l nobody holds, or nil when l is reached.
func FreeSlot(ctx context.Context, st store.Store, l Limit) ([]byte, error) {
	return freeSlot(ctx, st, l)
}

// Holders answers the run ids holding a slot of l, at most l.Size+1 of
// them (a limit lowered since may have more holders than slots).
func Holders(ctx context.Context, st store.Store, l Limit) ([]string, error) {
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: l.Prefix, Limit: min(l.Size+1, store.MaxScanLimit)})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Items))
	for i, it := range res.Items {
		out[i] = string(it.Value)
	}
	return out, nil
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

// The run queue has one lane per priority (docs/semantics.md#run-concurrency):
// priority 3's entries are rq:{queued_at}:{run} (where every entry from
// before priorities is), the others' rq:~p{n}:{queued_at}:{run}, so that a
// lane sorts oldest first and the lanes other than 3's sort after it.

// lane answers the lane component of a priority ("" for 3).
func lane(priority int) string {
	if priority == 0 || priority == defaultPriority {
		return ""
	}
	return "~p" + strconv.Itoa(priority)
}

// defaultPriority is the lane the queue itself holds (record.DefaultPriority).
const defaultPriority = 3

// QueuedKey indexes a QUEUED run of priority in the order it was queued.
func QueuedKey(priority int, queuedAt time.Time, runID string) []byte {
	if l := lane(priority); l != "" {
		return keyspace.RunQueue.Key(l, store.Time(queuedAt), runID)
	}
	return keyspace.RunQueue.Key(store.Time(queuedAt), runID)
}

// QueuedValue is a queued entry's value: the run id, and after a NUL byte
// the slot prefix of its concurrency key, if it has one, so that a
// reconciler pass skips the runs of a key it found full without reading
// them.
func QueuedValue(runID string, key *Limit) []byte {
	if key == nil {
		return []byte(runID)
	}
	return append(append([]byte(runID), 0), key.Prefix...)
}

// QueuedRuns bounds the queued runs one reconciler pass decides on.
const QueuedRuns = 256

// QueueScan bounds the queued entries one reconciler pass reads: it skips
// those of a key it found full, so a key's backlog of up to this many does
// not hide the runs queued behind it.
const QueueScan = 4096

// Queued is one queued run's entry.
type Queued struct {
	Key   []byte
	RunID string
	// KeySlots is the slot prefix of the run's concurrency key ("": none).
	KeySlots string
}

// Oldest answers up to QueueScan queued runs in the order they start:
// by priority, then oldest first.
func Oldest(ctx context.Context, st store.Store) ([]Queued, error) {
	return Waiting(ctx, st, QueueScan)
}

// Waiting answers up to n queued runs, by priority, then oldest first:
// the lanes of priorities 1 and 2, the queue's own (3), then 4 and 5. One
// read finds whether any lane but 3's holds entries.
func Waiting(ctx context.Context, st store.Store, n int) ([]Queued, error) {
	head := QueuePrefix()
	tilde := append(append([]byte{}, head...), '~')
	others, err := st.Scan(ctx, &store.ScanParams{Prefix: tilde, Limit: 1})
	if err != nil {
		return nil, err
	}
	scans := []*store.ScanParams{{Start: head, End: tilde}}
	if len(others.Items) > 0 {
		lanes := func(p int) *store.ScanParams { return &store.ScanParams{Prefix: keyspace.RunQueue.KeyPrefix(lane(p))} }
		scans = []*store.ScanParams{lanes(1), lanes(2), scans[0], lanes(4), lanes(5)}
	}
	var out []Queued
	for _, sp := range scans {
		for len(out) < n {
			sp.Limit = min(n-len(out), store.MaxScanLimit)
			res, err := st.Scan(ctx, sp)
			if err != nil {
				return nil, err
			}
			for _, it := range res.Items {
				out = append(out, queuedOf(it))
			}
			if res.Next == nil {
				break
			}
			sp.After = res.Next
		}
	}
	return out, nil
}

// queuedOf reads a queued entry.
func queuedOf(it store.Item) Queued {
	q := Queued{Key: it.Key, RunID: string(it.Value)}
	if i := bytes.IndexByte(it.Value, 0); i >= 0 {
		q.RunID, q.KeySlots = string(it.Value[:i]), string(it.Value[i+1:])
	}
	return q
}

// SlotKeyParts answers a run concurrency key slot's tenant, plan and key
// (ok false for the slot of another limit).
func SlotKeyParts(slot []byte) (tenant, plan, key string, ok bool) {
	c, err := store.SplitKey(slot)
	if err != nil || len(c) != 6 || c[2] != "key" {
		return "", "", "", false
	}
	return c[1], c[3], c[4], true
}
