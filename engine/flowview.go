package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/queues"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// What flow control shows (docs/semantics.md#flow-visibility): per key of a
// queue's tasks, DescribeQueue's slots in use and limit, waiting tasks,
// throttle tokens and next release; per step of a run, GetRun's reason its
// ready task waits. Both are read when asked, from the same records the
// claims read, and change nothing.

// The bounds of a queue's flow description: the ready entries and held
// slots it reads, and the keys it answers (those with the most waiting).
const (
	flowViewEntries = 1000
	flowViewKeys    = 100
)

// flowGroup is one key being described, with a run and action naming it
// (for its limit or throttle).
type flowGroup struct {
	info queues.FlowKey
	run  *record.Run
	a    *definition.Action
}

// describeFlow adds to q the flow-control keys of its tasks: those its
// ready tasks wait on and those its claimed tasks hold.
func describeFlow(ctx context.Context, e *Engine, q *QueueInfo) error {
	groups := map[string]*flowGroup{}
	add := func(t *record.Task, waiting bool) error {
		run, err := e.records.LoadRun(ctx, t.RunID)
		if err != nil {
			return nil //nolint:nilerr // a run gone meanwhile is not described
		}
		a := run.Action(t.ActionID)
		if a == nil {
			return nil
		}
		for _, g := range flowGroupsOf(run, a, t.Flow) {
			id := g.info.Kind + "\x00" + g.info.Scope + "\x00" + g.info.Key
			if groups[id] == nil {
				groups[id] = g
			}
			if waiting {
				groups[id].info.Waiting++
			}
		}
		return nil
	}
	waiting := func(t *record.Task) error {
		if t.State != record.TaskReady || t.Flow.Err != "" {
			return nil
		}
		return add(t, true)
	}
	for prio, lane := range record.Lanes(q.Queue) {
		prefix := record.QueuePrefix(q.TenantID, lane)
		if err := eachFlowTask(ctx, e, prefix, store.PrefixEnd(prefix), false, waiting); err != nil {
			return err
		}
		start, end := record.FairLanesRange(q.TenantID, q.Queue, prio+1) // its fair sub-lanes (docs/semantics.md#fairness)
		if err := eachFlowTask(ctx, e, start, end, false, waiting); err != nil {
			return err
		}
	}
	slots := keyspace.FlowSlot.KeyPrefix(q.TenantID)
	if err := eachFlowTask(ctx, e, slots, store.PrefixEnd(slots), true, func(t *record.Task) error {
		if t.State != record.TaskClaimed || t.Queue != q.Queue {
			return nil
		}
		return add(t, false)
	}); err != nil {
		return err
	}
	out := make([]queues.FlowKey, 0, len(groups))
	for _, g := range groups {
		if err := fillFlowGroup(ctx, e, g); err != nil {
			return err
		}
		out = append(out, g.info)
	}
	slices.SortFunc(out, func(x, y queues.FlowKey) int {
		return cmp.Or(cmp.Compare(y.Waiting, x.Waiting), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Scope, y.Scope), cmp.Compare(x.Key, y.Key))
	})
	q.FlowKeys = out[:min(len(out), flowViewKeys)]
	return nil
}

// eachFlowTask calls fn with each flow-controlled task named from start to
// end (up to flowViewEntries): by ready entries, or (holders) by the claim
// tokens slots hold.
func eachFlowTask(ctx context.Context, e *Engine, start, end []byte, holders bool, fn func(*record.Task) error) error {
	res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: flowViewEntries})
	if err != nil {
		return err
	}
	for _, it := range res.Items {
		var id string
		if holders {
			if id, err = parseToken(string(it.Value)); err != nil {
				continue
			}
		} else if id, err = runcodec.DecodeReady(it.Value); err != nil {
			continue
		}
		t, _, err := e.records.LoadTask(ctx, id)
		if err != nil || t.Flow == nil {
			continue // gone meanwhile, or not flow-controlled
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// flowGroupsOf answers the keys a task of a has: its concurrency key and
// its throttle key.
func flowGroupsOf(run *record.Run, a *definition.Action, f *runcodec.TaskFlow) []*flowGroup {
	var out []*flowGroup
	if c := a.Concurrency; c != nil {
		out = append(out, &flowGroup{info: queues.FlowKey{Kind: "concurrency", Scope: scopeName(run, c.Scope), Key: f.ConcurrencyKey, Limit: c.Limit}, run: run, a: a})
	}
	if t := a.Throttle; t != nil {
		out = append(out, &flowGroup{info: queues.FlowKey{Kind: "throttle", Scope: scopeName(run, t.Scope), Key: f.ThrottleKey}, run: run, a: a})
	}
	return out
}

// scopeName names a scope as descriptions show it: "tenant" or "plan:{id}".
func scopeName(run *record.Run, s definition.FlowScope) string {
	if definition.ScopeOf(s) == definition.ScopeTenant {
		return "tenant"
	}
	return "plan:" + run.Definition.PlanID
}

// fillFlowGroup reads a key's slots in use, or its throttle's bucket.
func fillFlowGroup(ctx context.Context, e *Engine, g *flowGroup) error {
	if g.info.Kind == "concurrency" {
		held, err := flowHolders(ctx, e.store, slotPrefix(g.run, g.a, g.info.Key))
		g.info.InUse = len(held)
		return err
	}
	s := flowStepOf(g.run, g.a.ID)
	if s == nil {
		return nil
	}
	r, err := readFlow(ctx, e, g.run, &definition.Action{ID: g.a.ID, Throttle: g.a.Throttle}, &record.Task{Flow: &runcodec.TaskFlow{ThrottleKey: g.info.Key}})
	if err != nil {
		return err
	}
	now := clockNow(e)
	g.info.Rate, g.info.Burst = s.throttle.Rate().String(), s.throttle.Burst()
	g.info.Tokens, g.info.NextRelease = s.throttle.Tokens(r.bucket, now), s.throttle.NextRelease(r.bucket, now)
	return nil
}

// flowWaitsOf answers, for each step of the run whose ready task flow
// control holds now, why: "concurrency key customer-42 at 2/2", "throttled
// by key payments until 12:00:01.25Z". Read when the run is read; a run
// without flow control reads nothing.
func flowWaitsOf(ctx context.Context, e *Engine, rec *record.Run, s *runstate.State) (map[string]string, error) {
	if !hasFlow(&rec.Definition) || s.Status.Terminal() {
		return nil, nil
	}
	var out map[string]string
	for _, st := range s.Steps {
		if st.TaskID == "" || st.FlowSlot != "" || (st.Status != runstate.StepScheduled && st.Status != runstate.StepRunning) {
			continue
		}
		t, _, err := e.records.LoadTask(ctx, st.TaskID)
		if err != nil || (t.Flow == nil && t.FairKey == "") || t.State != record.TaskReady || (t.Flow != nil && t.Flow.Err != "") {
			continue
		}
		var why string
		if t.Flow != nil {
			if why, err = flowWait(ctx, e, rec, t); err != nil {
				return nil, err
			}
		}
		if why == "" && t.FairKey != "" {
			if why, err = fairWait(ctx, e, t); err != nil {
				return nil, err
			}
		}
		if why != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[st.ActionID] = why
		}
	}
	return out, nil
}

// flowWait answers why flow control holds a ready task now ("": it does
// not; the task waits for a worker).
func flowWait(ctx context.Context, e *Engine, rec *record.Run, t *record.Task) (string, error) {
	a, s := rec.Action(t.ActionID), flowStepOf(rec, t.ActionID)
	if a == nil || s == nil {
		return "", nil
	}
	r, err := readFlow(ctx, e, rec, a, t)
	if err != nil {
		return "", err
	}
	var why []string
	if r.full {
		held, err := flowHolders(ctx, e.store, slotPrefix(rec, a, t.Flow.ConcurrencyKey))
		if err != nil {
			return "", err
		}
		why = append(why, fmt.Sprintf("concurrency key %s at %d/%d", t.Flow.ConcurrencyKey, len(held), a.Concurrency.Limit))
	} else if r.bucketKey != nil {
		now := clockNow(e)
		if s.throttle.Tokens(r.bucket, now) == 0 {
			why = append(why, fmt.Sprintf("throttled by key %s until %s", t.Flow.ThrottleKey,
				s.throttle.NextRelease(r.bucket, now).Format(time.RFC3339Nano)))
		}
	}
	return strings.Join(why, "; "), nil
}

// FlowKeyStat is one flow-control key's figures for metrics: a
// concurrency key's slots held, a throttle key's backlog (how far its
// bucket runs ahead of now: the wait of a task that came now, beyond the
// burst).
type FlowKeyStat struct {
	TenantID, Kind, Scope, Key string
	InUse                      int
	Ahead                      time.Duration
	// Waiting is, for a run concurrency key (Kind "run", Scope
	// "plan:{plan}"), its QUEUED runs (runconcurrency.go).
	Waiting int
	// Ready, for a fairness key (kind "fairness"), counts its ready tasks.
	Ready int
}

// flowStatsTop is how many keys of each kind metrics name; the rest are
// one series with key "other" (its slots summed, its backlog the most).
const flowStatsTop = 20

// OtherFlowKey names the series of the keys beyond the top ones.
const OtherFlowKey = "other"

// flowStats answers the keys of every tenant by slots held and by
// throttle backlog, the top flowStatsTop of each and one "other" series
// per kind, from at most StatsCap slot and bucket records each.
func flowStats(ctx context.Context, e *Engine) ([]FlowKeyStat, error) {
	slots, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyspace.FlowSlot.KeyPrefix(), Limit: StatsCap})
	if err != nil {
		return nil, err
	}
	inUse := map[[3]string]int{}
	for _, it := range slots.Items {
		if c, ok := flowKeyParts(it.Key, 5); ok { // fcs, tenant, scope, key, index
			inUse[c]++
		}
	}
	buckets, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyspace.FlowThrottle.KeyPrefix(), Limit: StatsCap})
	if err != nil {
		return nil, err
	}
	now := clockNow(e)
	ahead := map[[3]string]time.Duration{}
	for _, it := range buckets.Items {
		var b flowcontrol.Bucket
		if c, ok := flowKeyParts(it.Key, 4); ok && b.UnmarshalBinary(it.Value) == nil && !b.Idle(now) {
			ahead[c] = time.Duration(b.TAT - now.UnixNano())
		}
	}
	out := topFlowKeys("concurrency", inUse, func(s *FlowKeyStat, n int) { s.InUse += n })
	return append(out, topFlowKeys("throttle", ahead, func(s *FlowKeyStat, d time.Duration) { s.Ahead = max(s.Ahead, d) })...), nil
}

// flowKeyParts answers a flow record key's tenant, scope and key, when it
// has n components.
func flowKeyParts(key []byte, n int) ([3]string, bool) {
	c, err := store.SplitKey(key)
	if err != nil || len(c) != n {
		return [3]string{}, false
	}
	return [3]string{c[1], c[2], c[3]}, true
}

// topFlowKeys answers the flowStatsTop keys of m with the largest values,
// by tenant, and the rest folded into one series per tenant named
// OtherFlowKey.
func topFlowKeys[V int | time.Duration](kind string, m map[[3]string]V, fold func(*FlowKeyStat, V)) []FlowKeyStat {
	keys := make([][3]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [3]string) int {
		return cmp.Or(cmp.Compare(m[y], m[x]), cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]), cmp.Compare(x[2], y[2]))
	})
	var out []FlowKeyStat
	other := map[string]*FlowKeyStat{}
	for i, k := range keys {
		if i < flowStatsTop {
			s := FlowKeyStat{TenantID: k[0], Kind: kind, Scope: scopeLabel(k[1]), Key: k[2]}
			fold(&s, m[k])
			out = append(out, s)
			continue
		}
		if other[k[0]] == nil {
			other[k[0]] = &FlowKeyStat{TenantID: k[0], Kind: kind, Scope: OtherFlowKey, Key: OtherFlowKey}
		}
		fold(other[k[0]], m[k])
	}
	for _, s := range other {
		out = append(out, *s)
	}
	return out
}

// scopeLabel names a stored scope ("t", "p:{plan}") as descriptions do.
func scopeLabel(s string) string {
	if s == "t" {
		return "tenant"
	}
	if plan, ok := strings.CutPrefix(s, "p:"); ok {
		return "plan:" + plan
	}
	return s
}
