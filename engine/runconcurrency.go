package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/expr"
	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Run concurrency (docs/semantics.md#run-concurrency): a definition's
// concurrency key is a CEL expression over the input and the run id,
// compiled and evaluated at submission and kept in the run record
// (record.Run.ConcurrencyKey). It is one more limit of package admission:
// its slots slot:{tenant}:key:{plan}:{key}:{i} are taken in the batch that
// starts the run and given back in the batch that ends it, like the plan's
// and the tenant's, and a QUEUED run of a key is also indexed per key
// (slot:{tenant}:keyq:{plan}:{key}:p{priority}:{queued_at}:{run}), so that
// a run starts only when no earlier run of its key waits ahead of it.

// MaxConcurrencyKeyBytes bounds a run concurrency key's value.
const MaxConcurrencyKeyBytes = 512

// runKeyPrograms remembers compiled run concurrency keys by plan SHA-256.
var runKeyPrograms planCache[*expr.Program]

// runKeyProgram answers the compiled concurrency key of a prepared
// definition (nil: it has none), or the violations of its concurrency
// (their API paths, under "definition.concurrency").
func runKeyProgram(d *definition.Definition, sha string) (*expr.Program, error) {
	if d.Concurrency == nil {
		return nil, nil
	}
	return runKeyPrograms.get(sha, func() (*expr.Program, []FieldViolation) { return compileRunKey(d) })
}

// compileRunKey checks a definition's concurrency and compiles its key: a
// string over input and run.id; one that reads a step's output is refused,
// since the key is evaluated when the run is submitted.
func compileRunKey(d *definition.Definition) (*expr.Program, []FieldViolation) {
	c := d.Concurrency
	var vs []FieldViolation
	if err := flowcontrol.ValidLimit(c.Limit); err != nil {
		vs = append(vs, flowViolation("definition.concurrency.limit", err))
	}
	switch c.Strategy {
	case "", definition.StrategyQueue, definition.StrategyCancelNewest, definition.StrategyCancelInProgress:
	default:
		vs = append(vs, fault.Violation("definition.concurrency.strategy", "concurrency.strategy_known",
			"strategy must be queue, cancelNewest or cancelInProgress"))
	}
	env, err := flowEnv()
	if err != nil {
		return nil, append(vs, fault.Violation("definition", "flow.environment", "the expression environment failed to build"))
	}
	known := make([]string, len(d.Actions))
	for i := range d.Actions {
		known[i] = d.Actions[i].ID
	}
	const path = "definition.concurrency.key"
	prg := compileKey(env, c.Key, path, expr.Scope{Steps: known, Known: known}, &vs)
	if prg != nil && len(prg.Steps()) > 0 {
		vs = append(vs, fault.Violation(path, "concurrency.key_steps",
			"a run's concurrency key is evaluated when the run is submitted: it may read input and run.id, not steps"))
	}
	return prg, vs
}

// runKeyAtSubmit evaluates the run's concurrency key over its input and
// id: a string of at most MaxConcurrencyKeyBytes, or an invalid-argument
// error naming definition.concurrency.key (never the value).
func runKeyAtSubmit(rec *record.Run, prg *expr.Program) (string, error) {
	if prg == nil {
		return "", nil
	}
	const path = "definition.concurrency.key"
	key, err := prg.EvalString(expr.Vars{Input: rec.Input, RunID: rec.RunID})
	if err != nil {
		return "", fault.InvalidArgument("invalid definition: the concurrency key does not evaluate over the input", exprViolations(path, err)...)
	}
	if key == "" || len(key) > MaxConcurrencyKeyBytes {
		return "", fault.Invalid(fault.Violation(path, "concurrency.key_length",
			"the concurrency key must answer a string of 1 to %d bytes, got %d", MaxConcurrencyKeyBytes, len(key)))
	}
	return key, nil
}

// keyLimitOf answers the limit of the run's concurrency key, or nil.
func keyLimitOf(run *record.Run) *admission.Limit {
	c := run.Definition.Concurrency
	if c == nil || run.ConcurrencyKey == "" {
		return nil
	}
	l := admission.KeyLimit(run.TenantID, run.Definition.PlanID, run.ConcurrencyKey, c.Limit)
	return &l
}

// keyQueuePrefix begins the QUEUED runs of a concurrency key, by priority
// then oldest first.
func keyQueuePrefix(run *record.Run) []byte {
	return keyspace.Slot.KeyPrefix(run.TenantID, "keyq", run.Definition.PlanID, run.ConcurrencyKey)
}

// keyQueueKey is the run's entry among its key's QUEUED runs, had it been
// queued at queuedAt.
func keyQueueKey(run *record.Run, state *runstate.State) []byte {
	return keyQueueKeyAt(run, state.QueuedAt)
}

func keyQueueKeyAt(run *record.Run, at time.Time) []byte {
	return keyspace.Slot.Key(run.TenantID, "keyq", run.Definition.PlanID, run.ConcurrencyKey,
		"p"+strconv.Itoa(run.EffectivePriority()), store.Time(at), run.RunID)
}

// prepareKey reads, for a decision that may admit the run, its concurrency
// key's slots: a free one joins the slots the decision takes; none, or
// (strategy queue) an earlier run of the key QUEUED ahead of this one,
// makes the key full (decide.Prepared.KeyFull).
func prepareKey(ctx context.Context, e *Engine, run *record.Run, state *runstate.State, p *prepared) error {
	l := keyLimitOf(run)
	if l == nil {
		return nil
	}
	slot, err := admission.FreeSlot(ctx, e.store, *l)
	if err != nil {
		return fmt.Errorf("read the concurrency key slots of run %s: %w", run.RunID, err)
	}
	if slot == nil {
		held, err := admission.Holders(ctx, e.store, *l)
		if err != nil {
			return fmt.Errorf("read the concurrency key slots of run %s: %w", run.RunID, err)
		}
		p.rules.KeyFull, p.rules.KeyWait = true, keyWait(run, len(held))
		return nil
	}
	if definition.StrategyOf(run.Definition.Concurrency.Strategy) == definition.StrategyQueue && !state.Status.Terminal() {
		ahead, err := queuedAhead(ctx, e, run, state)
		if err != nil {
			return err
		}
		if ahead {
			p.rules.KeyFull, p.rules.KeyWait = true, fmt.Sprintf("concurrency key %s: earlier runs of the key wait first", run.ConcurrencyKey)
			return nil
		}
	}
	p.freeSlots = append(p.freeSlots, slot)
	return nil
}

// queuedAhead reports whether a QUEUED run of the key sorts before where
// this run is (or would be) queued: one bounded read of the key's queue.
func queuedAhead(ctx context.Context, e *Engine, run *record.Run, state *runstate.State) (bool, error) {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyQueuePrefix(run), Limit: 1})
	if err != nil {
		return false, fmt.Errorf("read the concurrency key queue of run %s: %w", run.RunID, err)
	}
	if len(res.Items) == 0 {
		return false, nil
	}
	own := keyQueueKeyAt(run, clockNow(e))
	if !state.QueuedAt.IsZero() {
		own = keyQueueKey(run, state)
	}
	return bytes.Compare(res.Items[0].Key, own) < 0, nil
}

// keyWait says a key is at its limit: "concurrency key customer-42 at 2/2".
func keyWait(run *record.Run, held int) string {
	return fmt.Sprintf("concurrency key %s at %d/%d", run.ConcurrencyKey, held, run.Definition.Concurrency.Limit)
}

// enqueueKeyed writes a QUEUED run's entries: the run queue's (its value
// naming the key's slots) and, for a run with a key, the key's queue's.
func enqueueKeyed(c *change) {
	l := keyLimitOf(c.run)
	c.ops = append(c.ops, store.Put(admission.QueuedKey(c.run.EffectivePriority(), c.state.QueuedAt, c.run.RunID),
		admission.QueuedValue(c.run.RunID, l)))
	if l != nil {
		c.ops = append(c.ops, store.Put(keyQueueKey(c.run, c.state), []byte(c.run.RunID)))
	}
}

// dequeueKeyed deletes a QUEUED run's entries.
func dequeueKeyed(c *change, run *record.Run, s *runstate.State) {
	c.del(admission.QueuedKey(run.EffectivePriority(), s.QueuedAt, run.RunID))
	if keyLimitOf(run) != nil {
		c.del(keyQueueKey(run, s))
	}
}

// preemptOldest cancels the oldest started run holding a slot of the
// run's concurrency key (strategy cancelInProgress), with a reason naming
// the newer run; a holder that cannot be cancelled (COMPENSATING, or
// ended since) is passed over for the next. It answers whether one was.
// The cancel is a control signal keyed by the newer run, so a pass made
// again cancels nothing twice.
func preemptOldest(ctx context.Context, e *Engine, run *record.Run) (bool, error) {
	l := keyLimitOf(run)
	if l == nil {
		return false, nil
	}
	held, err := admission.Holders(ctx, e.store, *l)
	if err != nil {
		return false, err
	}
	type holder struct {
		rec *record.Run
	}
	var hs []holder
	for _, id := range held {
		if id == run.RunID {
			return false, nil // it holds a slot itself: it has started
		}
		rec, err := e.records.LoadRun(ctx, id)
		if err != nil {
			continue // removed since
		}
		hs = append(hs, holder{rec})
	}
	slices.SortFunc(hs, func(a, b holder) int {
		return cmp.Or(a.rec.CreatedAt.Compare(b.rec.CreatedAt), cmp.Compare(a.rec.RunID, b.rec.RunID))
	})
	id := "concurrency-preempt:" + run.RunID
	for _, h := range hs {
		res, err := e.CancelRun(ctx, ControlParams{TenantID: h.rec.TenantID, RunID: h.rec.RunID, SignalID: &id,
			Reason: fmt.Sprintf("cancelled by concurrency key %s (strategy cancelInProgress): newer run %s takes its slot", run.ConcurrencyKey, run.RunID)})
		if err == nil && !res.Duplicate {
			return true, nil
		}
		if err == nil {
			continue // this run had it cancelled once already, and it holds a slot again (a rerun): the next
		}
		var fe *Error
		if errors.As(err, &fe) && (fe.Code == CodeIllegalTransition || fe.Code == CodeNotFound) {
			continue
		}
		return false, err
	}
	return false, nil
}

// runKeyConcurrencyOf answers the run's concurrency figures for GetRun:
// its key, the limit and strategy, the slots of the key held, and why a
// QUEUED run waits. A run without a key reads nothing.
func runKeyConcurrencyOf(ctx context.Context, e *Engine, rec *record.Run, s *runstate.State) (*runstate.KeyConcurrency, error) {
	l := keyLimitOf(rec)
	if l == nil {
		return nil, nil
	}
	c := rec.Definition.Concurrency
	out := &runstate.KeyConcurrency{Key: rec.ConcurrencyKey, Limit: c.Limit, Strategy: string(definition.StrategyOf(c.Strategy))}
	// (snapshotOf answers the key alone; GetRun reads the figures.)
	held, err := admission.Holders(ctx, e.store, *l)
	if err != nil {
		return nil, err
	}
	out.InUse = len(held)
	if s.Status != runstate.RunQueued {
		return out, nil
	}
	if out.InUse >= c.Limit {
		out.Wait = keyWait(rec, out.InUse)
		return out, nil
	}
	if _, full, err := admission.FreeSlots(ctx, e.store, e.cfg.limitsOf(rec)); err != nil {
		return nil, err
	} else if full != nil {
		out.Wait = fmt.Sprintf("%s at %d/%d", full.Of, full.Size, full.Size)
		return out, nil
	}
	if ahead, err := queuedAhead(ctx, e, rec, s); err != nil {
		return nil, err
	} else if ahead {
		out.Wait = fmt.Sprintf("concurrency key %s: earlier runs of the key wait first", rec.ConcurrencyKey)
	}
	return out, nil
}

// RunConcurrencyParams names the tenant, and the plan (empty: every plan),
// whose run concurrency keys DescribeRunConcurrency lists.
type RunConcurrencyParams struct {
	TenantID string
	PlanID   string
}

// RunConcurrencyKey is one run concurrency key's figures.
type RunConcurrencyKey struct {
	PlanID, Key  string
	InUse, Limit int
	Waiting      int
	limitFrom    string // a run of the key whose definition gives the limit
}

// runConcurrencyKeys bounds the keys DescribeRunConcurrency answers.
const runConcurrencyKeys = 100

// DescribeRunConcurrency lists the tenant's run concurrency keys with
// started or queued runs, those with the most waiting first (then the most
// in use), at most 100, from at most StatsCap slots and StatsCap queued
// runs (docs/semantics.md#run-concurrency). It changes nothing.
func (q Queries) DescribeRunConcurrency(ctx context.Context, p RunConcurrencyParams) ([]RunConcurrencyKey, error) {
	e := q.e
	byKey := map[[2]string]*RunConcurrencyKey{}
	get := func(plan, key string) *RunConcurrencyKey {
		k := [2]string{plan, key}
		if byKey[k] == nil {
			byKey[k] = &RunConcurrencyKey{PlanID: plan, Key: key}
		}
		return byKey[k]
	}
	prefix := func(kind string) []byte {
		if p.PlanID != "" {
			return keyspace.Slot.KeyPrefix(p.TenantID, kind, p.PlanID)
		}
		return keyspace.Slot.KeyPrefix(p.TenantID, kind)
	}
	slots, err := e.store.Scan(ctx, &store.ScanParams{Prefix: prefix("key"), Limit: StatsCap})
	if err != nil {
		return nil, err
	}
	for _, it := range slots.Items {
		if _, plan, key, ok := admission.SlotKeyParts(it.Key); ok {
			k := get(plan, key)
			k.InUse++
			k.limitFrom = string(it.Value)
		}
	}
	queued, err := e.store.Scan(ctx, &store.ScanParams{Prefix: prefix("keyq"), Limit: StatsCap})
	if err != nil {
		return nil, err
	}
	for _, it := range queued.Items {
		c, err := store.SplitKey(it.Key)
		if err != nil || len(c) != 8 { // slot, tenant, keyq, plan, key, p{n}, queued_at, run
			continue
		}
		k := get(c[3], c[4])
		k.Waiting++
		if k.limitFrom == "" {
			k.limitFrom = string(it.Value)
		}
	}
	out := make([]RunConcurrencyKey, 0, len(byKey))
	for _, k := range byKey {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b RunConcurrencyKey) int {
		return cmp.Or(cmp.Compare(b.Waiting, a.Waiting), cmp.Compare(b.InUse, a.InUse), cmp.Compare(a.PlanID, b.PlanID), cmp.Compare(a.Key, b.Key))
	})
	out = out[:min(len(out), runConcurrencyKeys)]
	for i := range out {
		if rec, err := e.records.LoadRun(ctx, out[i].limitFrom); err == nil && rec.Definition.Concurrency != nil {
			out[i].Limit = rec.Definition.Concurrency.Limit
		}
	}
	return out, nil
}

// runKeyStats answers the run concurrency keys of every tenant for
// metrics: the top flowStatsTop keys by runs started and waiting, and one
// series named OtherFlowKey per tenant for the rest, from at most StatsCap
// slot records.
func runKeyStats(ctx context.Context, e *Engine) ([]FlowKeyStat, error) {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyspace.Slot.KeyPrefix(), Limit: StatsCap})
	if err != nil {
		return nil, err
	}
	type figures struct{ inUse, waiting int }
	m := map[[3]string]figures{}
	for _, it := range res.Items {
		c, err := store.SplitKey(it.Key)
		if err != nil || len(c) < 5 {
			continue
		}
		k := [3]string{c[1], "plan:" + c[3], c[4]}
		f := m[k]
		switch {
		case c[2] == "key" && len(c) == 6:
			f.inUse++
		case c[2] == "keyq" && len(c) == 8:
			f.waiting++
		default:
			continue
		}
		m[k] = f
	}
	keys := make([][3]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [3]string) int {
		return cmp.Or(cmp.Compare(m[y].inUse+m[y].waiting, m[x].inUse+m[x].waiting), cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]), cmp.Compare(x[2], y[2]))
	})
	var out []FlowKeyStat
	other := map[string]int{} // tenant → its "other" series in out
	for i, k := range keys {
		f := m[k]
		if i < flowStatsTop {
			out = append(out, FlowKeyStat{TenantID: k[0], Kind: "run", Scope: k[1], Key: k[2], InUse: f.inUse, Waiting: f.waiting})
			continue
		}
		j, ok := other[k[0]]
		if !ok {
			j = len(out)
			other[k[0]] = j
			out = append(out, FlowKeyStat{TenantID: k[0], Kind: "run", Scope: OtherFlowKey, Key: OtherFlowKey})
		}
		out[j].InUse += f.inUse
		out[j].Waiting += f.waiting
	}
	return out, nil
}
