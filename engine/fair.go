package engine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/expr"
	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/queues"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/store"
)

// Fairness (docs/semantics.md#fairness): a definition's (or a step's)
// fairness key and weight are CEL expressions, compiled when the
// definition is submitted and evaluated when an activity task is created;
// the values are kept in the task record, and a task with a key keeps its
// ready entry in its priority's sub-lane of that key (record.FairLane).
// A poll that finds fair sub-lanes in a priority hands out the heads of
// the priority's keys — the plain lane's tasks are the implicit key "" —
// by start-time fair queueing (flowcontrol.Pick), and the claim moves the
// priority's virtual time and the key's finish tag in its own batch
// (fairclaim.go).

// fairStep is a step's compiled fairness.
type fairStep struct {
	key    *expr.Program
	weight *expr.Program // nil: constant
	// constant is the weight when it reads nothing (valid, or the
	// definition was refused).
	constant float64
	// path is the API path of the fairness mapping (for submit checks).
	path string
}

// compileFairness checks and compiles a fairness setting at path.
func compileFairness(env *expr.Env, f *definition.Fairness, path string, scope expr.Scope, vs *[]FieldViolation) *fairStep {
	s := &fairStep{path: path, constant: flowcontrol.DefaultWeight}
	s.key = compileKey(env, f.Key, path+".key", scope, vs)
	if f.Weight == "" {
		return s
	}
	if w, err := strconv.ParseFloat(f.Weight, 64); err == nil {
		if err := flowcontrol.ValidWeight(w); err != nil {
			*vs = append(*vs, flowViolation(path+".weight", err))
		}
		s.constant = w
		return s
	}
	prg, err := env.CompileKey(f.Weight, path+".weight", expr.Number, scope)
	if err != nil {
		*vs = append(*vs, exprViolations(path+".weight", err)...)
		return s
	}
	s.weight = prg
	return s
}

// checkAtSubmit evaluates, over the submission's input and run id, the
// key and weight when they read no step's output, so that a key that is
// not a string or a weight out of range is refused at submission.
func (s *fairStep) checkAtSubmit(vars expr.Vars) []FieldViolation {
	var vs []FieldViolation
	if s.key != nil && len(s.key.Steps()) == 0 {
		if _, err := s.key.EvalString(vars); err != nil {
			vs = append(vs, exprViolations(s.path+".key", err)...)
		}
	}
	if s.weight != nil && len(s.weight.Steps()) == 0 {
		if _, err := s.evalWeight(vars); err != nil {
			vs = append(vs, fairWeightViolations(s.path+".weight", err)...)
		}
	}
	return vs
}

// evalWeight answers the weight over vars, checked.
func (s *fairStep) evalWeight(vars expr.Vars) (float64, error) {
	if s.weight == nil {
		return s.constant, nil
	}
	w, err := s.weight.EvalNumber(vars)
	if err != nil {
		return 0, err
	}
	if err := flowcontrol.ValidWeight(w); err != nil {
		return 0, err
	}
	return w, nil
}

// fairWeightViolations answers a weight's evaluation error as violations.
func fairWeightViolations(path string, err error) []FieldViolation {
	var fe *flowcontrol.Error
	if errors.As(err, &fe) {
		return []FieldViolation{flowViolation(path, err)}
	}
	return exprViolations(path, err)
}

// fairOfTask evaluates a's fairness for its new activity task t: its key
// and weight, over the run's input, its id and the outputs of the upstream
// steps the step's expressions name. One that fails to evaluate is
// recorded as the task's flow error: the task is never claimed, and its
// attempt fails (docs/semantics.md#fairness).
func fairOfTask(c *change, a *definition.Action, t *record.Task) {
	if a.Fairness == nil && c.run.Definition.Fairness == nil {
		return
	}
	s := fairStepOf(c.run, a.ID)
	if s == nil {
		return
	}
	vars := fairVars(c, s)
	key, err := "", error(nil)
	if s.key != nil {
		key, err = s.key.EvalString(vars)
	}
	var w float64
	if err == nil {
		w, err = s.evalWeight(vars)
	}
	if err != nil {
		if t.Flow == nil {
			t.Flow = &runcodec.TaskFlow{}
		}
		if t.Flow.Err == "" {
			t.Flow.Err = "fairness: " + flowErr(err)
		}
		return
	}
	t.FairKey = key
	if key != "" && w != flowcontrol.DefaultWeight {
		t.FairWeight = w
	}
}

// fairVars are what a fairness expression reads.
func fairVars(c *change, s *fairStep) expr.Vars {
	return flowVars(c, &flowStep{concurrency: s.key, throttleKey: s.weight})
}

// weightOf answers a task's fairness weight (zero: the default).
func weightOf(w float64) float64 {
	if w == 0 {
		return flowcontrol.DefaultWeight
	}
	return w
}

// The fair-queueing state of one priority of a queue (keyspace.FairQueue):
// its virtual time, and each key's finish tag, big-endian uint64s.

// fairVirtualKey is the virtual time of a queue's priority.
func fairVirtualKey(tenant, queue string, priority int) []byte {
	return keyspace.FairQueue.Key(tenant, queue, strconv.Itoa(priority), "v")
}

// fairTagKey is a fairness key's finish tag at a queue's priority; the
// implicit key's is "i", every other's "k:{key}".
func fairTagKey(tenant, queue string, priority int, key string) []byte {
	if key == "" {
		return keyspace.FairQueue.Key(tenant, queue, strconv.Itoa(priority), "i")
	}
	return keyspace.FairQueue.Key(tenant, queue, strconv.Itoa(priority), "k", key)
}

// fairStatePrefix begins the whole fair-queueing state of a queue's
// priority.
func fairStatePrefix(tenant, queue string, priority int) []byte {
	return keyspace.FairQueue.KeyPrefix(tenant, queue, strconv.Itoa(priority))
}

// encodeTag and decodeTag store a virtual time or a finish tag.
func encodeTag(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func decodeTag(b []byte) uint64 {
	if len(b) != 8 {
		return 0 // unreadable: as none
	}
	return binary.BigEndian.Uint64(b)
}

// readTag reads a tag and the condition that it is still what was read.
func readTag(ctx context.Context, st store.Store, key []byte) (uint64, store.Condition, error) {
	it, err := st.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return 0, store.IfAbsent(key), nil
	}
	if err != nil {
		return 0, store.Condition{}, err
	}
	return decodeTag(it.Value), store.IfVersion(key, it.Version), nil
}

// The bounds of a queue's fairness description: the ready entries it
// reads per priority, and the keys it lists.
const (
	fairViewEntries = 1000
	fairViewKeys    = 100
)

// describeFair adds to q the fairness keys of its ready tasks, per
// priority (docs/semantics.md#fairness): each key's ready tasks (of the
// first 1,000 entries of the priority's fair sub-lanes) and the weight of
// its oldest; the keys with the most ready tasks first, at most 100, the
// rest counted in FairOther.
func describeFair(ctx context.Context, e *Engine, q *QueueInfo) error {
	now := clockNow(e)
	type group struct {
		info  queues.FairKey
		first string // the task of its first entry
	}
	var all []*group
	for prio := 1; prio <= record.LowestPriority; prio++ {
		start, end := record.FairLanesRange(q.TenantID, q.Queue, prio)
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: fairViewEntries})
		if err != nil {
			return err
		}
		byKey := map[string]*group{}
		for _, it := range res.Items {
			lane, ok := record.LaneOfKey(it.Key)
			if !ok || readyAt(it.Key).After(now) {
				continue
			}
			_, _, key, fair := record.ParseLane(lane)
			if !fair {
				continue
			}
			g := byKey[key]
			if g == nil {
				g = &group{info: queues.FairKey{Priority: prio, Key: key}}
				g.first, _ = runcodec.DecodeReady(it.Value)
				byKey[key] = g
				all = append(all, g)
			}
			g.info.Backlog++
		}
	}
	slices.SortFunc(all, func(x, y *group) int {
		return cmp.Or(cmp.Compare(x.info.Priority, y.info.Priority), cmp.Compare(y.info.Backlog, x.info.Backlog), cmp.Compare(x.info.Key, y.info.Key))
	})
	for i, g := range all {
		if i >= fairViewKeys {
			q.FairOther += g.info.Backlog
			continue
		}
		g.info.Weight = flowcontrol.DefaultWeight
		if t, _, err := e.records.LoadTask(ctx, g.first); err == nil {
			g.info.Weight = weightOf(t.FairWeight)
		}
		q.FairKeys = append(q.FairKeys, g.info)
	}
	return nil
}

// fairWait answers why a ready task with a fairness key waits its fair
// turn now (docs/semantics.md#fairness): another key of its priority goes
// first ("waits its fair turn: key A (weight 1) at priority 3, key B goes
// first"), or older tasks of its own key do; "" when it is next.
func fairWait(ctx context.Context, e *Engine, t *record.Task) (string, error) {
	now := clockNow(e)
	if t.NotBefore.After(now) {
		return "", nil
	}
	prio := t.Priority
	if prio == 0 {
		prio = record.DefaultPriority
	}
	virtual, tags, err := readFairState(ctx, e.store, t.TenantID, t.Queue, prio)
	if err != nil {
		return "", err
	}
	lane := readyLane{plain: record.Lane(t.Queue, prio), priority: prio, fair: true}
	heads, err := readFairHeads(ctx, e.store, t.TenantID, t.Queue, lane, now)
	if err != nil || len(heads) == 0 {
		return "", err
	}
	picks := make([]flowcontrol.Head, len(heads))
	for i, h := range heads {
		picks[i] = flowcontrol.Head{Key: h.key, Priority: prio, Seq: uint64(h.at.UnixNano()), Finish: tags[h.key].finish}
	}
	next := heads[flowcontrol.Pick(picks, func(int) uint64 { return virtual })]
	turn := fmt.Sprintf("waits its fair turn: key %s (weight %g) at priority %d", t.FairKey, weightOf(t.FairWeight), prio)
	switch {
	case next.key != t.FairKey && next.key == "":
		return turn + ", tasks without a fairness key go first", nil
	case next.key != t.FairKey:
		return turn + ", key " + next.key + " goes first", nil
	case next.task != t.TaskID:
		return turn + ", behind older tasks of its key", nil
	}
	return "", nil
}

// fairStats answers the fairness keys of every tenant by ready tasks, for
// metrics: the queues' priorities that have fair-queueing state (read
// from at most StatsCap of its records: a priority has some once a task
// of it was claimed in fair order), their fair sub-lanes' entries due
// now (at most StatsCap in all), the top keys and one "other" series per
// tenant (topFlowKeys).
func fairStats(ctx context.Context, e *Engine) ([]FlowKeyStat, error) {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyspace.FairQueue.KeyPrefix(), Limit: StatsCap})
	if err != nil {
		return nil, err
	}
	now := clockNow(e)
	ready := map[[3]string]int{}
	budget := StatsCap
	seen := map[[3]string]bool{}
	for _, it := range res.Items {
		c, err := store.SplitKey(it.Key)
		if err != nil || len(c) < 5 || budget <= 0 || seen[[3]string(c[1:4])] { // fcf, tenant, queue, priority, …
			continue
		}
		seen[[3]string(c[1:4])] = true
		prio, err := strconv.Atoi(c[3])
		if err != nil {
			continue
		}
		start, end := record.FairLanesRange(c[1], c[2], prio)
		lanes, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: min(budget, store.MaxScanLimit)})
		if err != nil {
			return nil, err
		}
		budget -= len(lanes.Items)
		for _, entry := range lanes.Items {
			lane, ok := record.LaneOfKey(entry.Key)
			if _, _, key, fair := record.ParseLane(lane); ok && fair && !readyAt(entry.Key).After(now) {
				ready[[3]string{c[1], "queue:" + c[2], key}]++
			}
		}
	}
	return topFlowKeys("fairness", ready, func(s *FlowKeyStat, n int) { s.Ready += n }), nil
}
