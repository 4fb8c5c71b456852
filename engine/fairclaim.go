package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/store"
)

// The claims of a priority that holds fair sub-lanes
// (docs/semantics.md#fairness). A poll reads the priority's fair-queueing
// state (its virtual time and its keys' finish tags, one bounded scan) and
// the head of each key (the plain lane's is the implicit key's), with one
// bounded read per key; then, for as many tasks as it has room for, it
// picks the head whose start tag — the later of the virtual time and the
// key's finish tag — is smallest (flowcontrol.Pick) and claims it. The
// claim's decision reads the virtual time and the key's finish tag again
// before its rule, and its batch, the one that claims the task, writes the
// key's new finish tag on a condition on the version read (two claimers of
// one key race: the loser decides again from fresh reads) and the new
// virtual time. The pick itself may use a state another weftd has since
// moved: at worst one task of a key goes a turn early, which the key's
// finish tag then charges it for.

// fairTake is what a fair claim read before its rule.
type fairTake struct {
	tenant, queue string
	priority      int
	key           string
	vKey, tagKey  []byte
	virtual       uint64
	finish        uint64
	tagCond       store.Condition
}

// newFairTake answers the fair take of a claim of key at a queue's priority.
func newFairTake(tenant, queue string, priority int, key string) *fairTake {
	return &fairTake{tenant: tenant, queue: queue, priority: priority, key: key,
		vKey: fairVirtualKey(tenant, queue, priority), tagKey: fairTagKey(tenant, queue, priority, key)}
}

// read reads the priority's virtual time and the key's finish tag.
func (f *fairTake) read(ctx context.Context, st store.Store) error {
	v, _, err := readTag(ctx, st, f.vKey)
	if err != nil {
		return err
	}
	f.virtual = v
	f.finish, f.tagCond, err = readTag(ctx, st, f.tagKey)
	return err
}

// conflict reports whether err is a lost race on the key's finish tag.
func (f *fairTake) conflict(err error) bool { return f != nil && conflictOn(err, f.tagKey) }

// takeFair is the fairness rule of a claim, over what read read: the key's
// finish tag moves by the task's cost (1,000,000 / weight) from its start
// tag, the priority's virtual time to that start tag, in the claim's batch.
func takeFair(c *change, f *fairTake, weight float64) {
	if f == nil {
		return
	}
	v, finish := flowcontrol.Serve(f.virtual, flowcontrol.Head{Key: f.key, Priority: f.priority, Weight: weightOf(weight), Finish: f.finish})
	c.require(f.tagCond)
	c.ops = append(c.ops, store.Put(f.tagKey, encodeTag(finish)))
	if v > f.virtual {
		c.ops = append(c.ops, store.Put(f.vKey, encodeTag(v)))
	}
}

// fairHead is one key's oldest ready task, as a fair poll read it.
type fairHead struct {
	key   string
	lane  string
	entry []byte // its ready entry's key
	task  string
	at    time.Time // its not_before
	// seen counts the key's entries the poll has looked at.
	seen int
}

// The bounds of one fair poll: the keys of a priority it reads heads of,
// the entries of one key it looks at, and the state it reads.
const (
	fairMaxKeys      = 1000
	fairMaxPerKey    = 64
	fairMaxStateRead = 2 * fairMaxKeys
	fairStaleSweep   = 16
)

// claimFair claims ready tasks of one priority of the poll's queue that
// holds fair sub-lanes, in fair order, onto out, until the poll has room
// for no more; done says the poll's room went to hand-offs.
func claimFair(ctx context.Context, e *Engine, p PollParams, slot *dispatch.Slot[*Task], lane readyLane, now time.Time, out *[]*Task) (bool, error) {
	virtual, tags, err := readFairState(ctx, e.store, p.TenantID, p.Queue, lane.priority)
	if err != nil {
		return false, err
	}
	heads, err := readFairHeads(ctx, e.store, p.TenantID, p.Queue, lane, now)
	if err != nil || len(heads) == 0 {
		return false, err
	}
	defer sweepFairTags(ctx, e.store, p.TenantID, p.Queue, lane.priority, tags, slices.Clone(heads), &virtual) // heads is filtered in place below
	picks := make([]flowcontrol.Head, 0, len(heads))
	for len(*out) < p.MaxTasks {
		picks, heads = picks[:0], liveHeads(heads)
		if len(heads) == 0 {
			return false, nil
		}
		for _, h := range heads {
			picks = append(picks, flowcontrol.Head{Key: h.key, Priority: lane.priority, Seq: uint64(h.at.UnixNano()), Finish: tags[h.key].finish})
		}
		h := heads[flowcontrol.Pick(picks, func(int) uint64 { return virtual })]
		if e.dispatch.Hold(slot, 1) == 0 {
			return true, nil // the rest of the poll's room went to hand-offs
		}
		task, weight, err := claimFairHead(ctx, e, h, p, slot.Names(), lane.priority)
		if task == nil {
			e.dispatch.Unhold(slot, 1)
		}
		if err != nil {
			return false, err
		}
		if task != nil {
			*out = append(*out, task)
			start := max(virtual, tags[h.key].finish)
			virtual = start
			tags[h.key] = fairTag{finish: start + costOf(weight)}
		}
		if err := nextFairHead(ctx, e.store, p.TenantID, h, now); err != nil {
			return false, err
		}
	}
	return false, nil
}

// costOf is the virtual time one task of weight w takes.
func costOf(w float64) uint64 {
	_, f := flowcontrol.Serve(0, flowcontrol.Head{Weight: weightOf(w)})
	return f
}

// claimFairHead claims the task at the head h of a fair priority, charging
// its key: the task, and its weight.
func claimFairHead(ctx context.Context, e *Engine, h *fairHead, p PollParams, names map[string]bool, priority int) (*Task, float64, error) {
	t, version, err := e.records.LoadTask(ctx, h.task)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if t.FairKey != h.key {
		return nil, 0, nil // not the entry's task any more
	}
	task, err := claimLoaded(ctx, e, t, version, p, names, newFairTake(p.TenantID, p.Queue, priority, h.key))
	return task, t.FairWeight, err
}

// fairTag is a finish tag as a fair poll read it.
type fairTag struct {
	finish  uint64
	version uint64
	known   bool // read from the store (version is its version)
}

// readFairState reads a queue priority's virtual time and finish tags.
func readFairState(ctx context.Context, st store.Store, tenant, queue string, priority int) (uint64, map[string]fairTag, error) {
	prefix := fairStatePrefix(tenant, queue, priority)
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefix, Limit: fairMaxStateRead})
	if err != nil {
		return 0, nil, err
	}
	var virtual uint64
	tags := make(map[string]fairTag, len(res.Items))
	for _, it := range res.Items {
		parts, err := store.SplitKey(it.Key)
		if err != nil || len(parts) < 5 {
			continue
		}
		switch {
		case parts[4] == "v":
			virtual = decodeTag(it.Value)
		case parts[4] == "i":
			tags[""] = fairTag{finish: decodeTag(it.Value), version: it.Version, known: true}
		case parts[4] == "k" && len(parts) >= 6:
			tags[parts[5]] = fairTag{finish: decodeTag(it.Value), version: it.Version, known: true}
		}
	}
	return virtual, tags, nil
}

// readFairHeads reads the head of each key of a fair priority that has a
// task due at now: the plain lane's (the implicit key), then each fair
// sub-lane's, with one bounded read each.
func readFairHeads(ctx context.Context, st store.Store, tenant, queue string, lane readyLane, now time.Time) ([]*fairHead, error) {
	var heads []*fairHead
	if lane.plain != "" {
		start, end := record.ReadyTaskRange(tenant, lane.plain, now)
		res, err := st.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 1})
		if err != nil {
			return nil, err
		}
		if h := headOf(res.Items, "", lane.plain); h != nil {
			heads = append(heads, h)
		}
	}
	start, end := record.FairLanesRange(tenant, queue, lane.priority)
	for len(heads) < fairMaxKeys {
		res, err := st.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(res.Items) == 0 {
			break
		}
		name, ok := record.LaneOfKey(res.Items[0].Key)
		if !ok {
			break
		}
		_, _, key, fair := record.ParseLane(name)
		start = store.PrefixEnd(record.QueuePrefix(tenant, name))
		if !fair {
			continue
		}
		if h := headOf(res.Items, key, name); h != nil && !h.at.After(now) {
			heads = append(heads, h)
		}
	}
	return heads, nil
}

// headOf answers the head a lane's first entry names, or nil.
func headOf(items []store.Item, key, lane string) *fairHead {
	if len(items) == 0 {
		return nil
	}
	taskID, err := runcodec.DecodeReady(items[0].Value)
	if err != nil {
		return &fairHead{key: key, lane: lane, entry: items[0].Key, seen: 1} // skipped: its task is unreadable
	}
	return &fairHead{key: key, lane: lane, entry: items[0].Key, task: taskID, at: readyAt(items[0].Key), seen: 1}
}

// readyAt answers a ready entry's not_before (zero when unreadable).
func readyAt(key []byte) time.Time {
	parts, err := store.SplitKey(key)
	if err != nil || len(parts) < 4 {
		return time.Time{}
	}
	t, err := store.ParseTime(parts[3])
	if err != nil {
		return time.Time{}
	}
	return t
}

// nextFairHead moves h to its key's next entry due at now (task "" when
// it has none, or when the poll has looked at enough of them).
func nextFairHead(ctx context.Context, st store.Store, tenant string, h *fairHead, now time.Time) error {
	h.task = ""
	if h.seen >= fairMaxPerKey {
		return nil
	}
	start, end := record.ReadyTaskRange(tenant, h.lane, now)
	res, err := st.Scan(ctx, &store.ScanParams{Start: start, End: end, After: h.entry, Limit: 1})
	if err != nil {
		return err
	}
	if n := headOf(res.Items, h.key, h.lane); n != nil {
		h.entry, h.task, h.at = n.entry, n.task, n.at
		h.seen++
	}
	return nil
}

// liveHeads answers the heads that still name a task.
func liveHeads(heads []*fairHead) []*fairHead {
	out := heads[:0]
	for _, h := range heads {
		if h.task != "" {
			out = append(out, h)
		}
	}
	return out
}

// sweepFairTags deletes finish tags that no longer change any pick (at or
// before the virtual time, Stale) of keys without a ready task, a few per
// poll, each on a condition on the version read, so that the state kept is
// bounded by the keys served recently.
func sweepFairTags(ctx context.Context, st store.Store, tenant, queue string, priority int, tags map[string]fairTag, heads []*fairHead, virtual *uint64) {
	ready := make(map[string]bool, len(heads))
	for _, h := range heads {
		ready[h.key] = true
	}
	n := 0
	for key, tag := range tags {
		if n >= fairStaleSweep {
			return
		}
		if !tag.known || ready[key] || !flowcontrol.Stale(tag.finish, *virtual) {
			continue
		}
		k := fairTagKey(tenant, queue, priority, key)
		n++
		_, _ = st.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfVersion(k, tag.version)}, Ops: []store.Op{store.Delete(k)}})
	}
}

// claimFairTask claims a ready fair task without flow control: the claim's
// decision reads its key's fair-queueing state before its rule and charges
// the key in its batch.
func claimFairTask(ctx context.Context, e *Engine, t *record.Task, version uint64, p PollParams, names map[string]bool, fair *fairTake) (*Task, error) {
	var task *Task
	_, err := commitDecision(ctx, e, decision{
		runID: t.RunID, actor: decide.WorkerActor(p.WorkerID),
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			task = nil // an earlier attempt's claim did not commit
			return t.RunID, false, fair.read(ctx, e.store)
		},
		decide: func(ch *change) error {
			ch.require(store.IfVersion(record.TaskKey(t.TaskID), version))
			var cerr error
			if task, cerr = claimTask(ch, t.Fresh(), p.WorkerID, names[verifyKey(t.Activity)], nil); cerr != nil || task == nil {
				return cerr
			}
			takeFair(ch, fair, t.FairWeight)
			return nil
		},
		lostRace:  fair.conflict,
		contended: func() error { return errSkipTask },
	})
	var cf *store.ConditionFailedError
	if errors.Is(err, errSkipTask) || errors.As(err, &cf) || CodeOf(err) == CodeNotFound {
		return nil, nil
	}
	return task, err
}
