package engine

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Limits cap concurrently started runs (RUNNING, BLOCKED, PAUSED or
// COMPENSATING). Zero means no limit. A definition's max_concurrent_runs, when
// set, caps its own runs in addition to the tenant's limit.
type Limits struct {
	PerTenant     int
	PerDefinition int
}

// Backpressure defaults.
const (
	// DefaultBackpressure is what a definition without a mode gets.
	DefaultBackpressure = definition.BackpressureQueue
	// DefaultRetryAfter is what REJECT tells a client to wait.
	DefaultRetryAfter = time.Second
	// DefaultDelay is how far DELAY pushes the start of an over-limit run's activities.
	DefaultDelay = 5 * time.Second
)

// A run holds a slot of each limit while it is started: slot keys are
// claimed with an absent-condition in the batch that starts the run and
// deleted in the batch that ends it, so no two runs ever hold one slot and a
// limit is never exceeded, whatever number of engines start runs at once.

func tenantSlotPrefix(tenant string) []byte { return store.KeyPrefix("slot", tenant, "*") }

func planSlotPrefix(tenant, plan string) []byte { return store.KeyPrefix("slot", tenant, "plan", plan) }

func slotKey(prefix []byte, i int) []byte {
	return append(append([]byte{}, prefix...), store.EscapeComponent(strconv.Itoa(i))...)
}

// queuedKey indexes QUEUED runs in the order they were queued, for the reconciler.
func queuedKey(queuedAt time.Time, runID string) []byte {
	return store.Key("rq", store.Time(queuedAt), runID)
}

// limitsFor answers the slot prefixes and sizes that apply to the run.
func (c *recorder) limitsFor() [][2]any {
	var out [][2]any
	if n := c.e.cfg.Limits.PerTenant; n > 0 {
		out = append(out, [2]any{tenantSlotPrefix(c.run.TenantID), n})
	}
	n := c.run.Definition.MaxConcurrentRuns
	if n == 0 {
		n = c.e.cfg.Limits.PerDefinition
	}
	if n > 0 {
		out = append(out, [2]any{planSlotPrefix(c.run.TenantID, c.run.Definition.PlanID), n})
	}
	return out
}

// claimSlots takes a free slot of every limit for the run, or answers false
// (and takes none) when a limit is reached.
func (c *recorder) claimSlots() (bool, error) {
	var keys [][]byte
	for _, l := range c.limitsFor() {
		key, ok, err := c.freeSlot(l[0].([]byte), l[1].(int))
		if err != nil || !ok {
			return false, err
		}
		keys = append(keys, key)
	}
	for _, k := range keys {
		c.require(store.IfAbsent(k))
		c.ops = append(c.ops, store.Put(k, []byte(c.run.RunID)))
		c.state.Slots = append(c.state.Slots, string(k))
	}
	return true, nil
}

// freeSlot finds a slot nobody holds.
func (c *recorder) freeSlot(prefix []byte, size int) ([]byte, bool, error) {
	res, err := c.e.store.Scan(c.ctx, &store.ScanParams{Prefix: prefix, Limit: min(size+1, store.MaxScanLimit)})
	if err != nil {
		return nil, false, err
	}
	taken := map[string]bool{}
	for _, it := range res.Items {
		taken[string(it.Key)] = true
	}
	for i := range size {
		if k := slotKey(prefix, i); !taken[string(k)] {
			return k, true, nil
		}
	}
	return nil, false, nil
}

// releaseSlots gives the run's slots back (the run ended).
func (c *recorder) releaseSlots() {
	for _, k := range c.state.Slots {
		c.del([]byte(k))
	}
	c.state.Slots = nil
}

// backpressure answers the run's mode.
func (c *recorder) backpressure() definition.BackpressureMode {
	if m := c.run.Definition.Backpressure; m != "" {
		return m
	}
	return c.e.cfg.Backpressure
}

// checkAdmission refuses a submission under REJECT when a limit is reached,
// before anything is written.
func (e *submissions) checkAdmission(ctx context.Context, rec *runRecord) error {
	mode := rec.Definition.Backpressure
	if mode == "" {
		mode = e.cfg.Backpressure
	}
	if mode != definition.BackpressureReject {
		return nil
	}
	ch := newChange(e.engine(), ctx, rec, &runstate.State{}, time.Time{}, "")
	for _, l := range ch.limitsFor() {
		_, ok, err := ch.freeSlot(l[0].([]byte), l[1].(int))
		if err != nil {
			return err
		}
		if !ok {
			return errLimitReached(l[1].(int), limitName(l[0].([]byte)))
		}
	}
	return nil
}

func limitName(prefix []byte) string {
	parts, err := store.SplitKey(prefix[:len(prefix)-1])
	if err != nil || len(parts) < 3 {
		return "this tenant"
	}
	if parts[2] == "plan" && len(parts) > 3 {
		return "plan " + parts[3]
	}
	return "this tenant"
}

// QueueResult is what one reconciler pass did with one run (docs/semantics.md#backpressure).
type QueueResult struct {
	RunID  string
	Status string // STARTED, SKIPPED or FAILED
}

// DequeueAndStart is the run-queue reconciler of docs/semantics.md#backpressure: stateless and
// idempotent, safe in several engines at once. Each QUEUED run, oldest
// first, is started when a slot is free (STARTED), left queued when not
// (SKIPPED), or reported FAILED when its start failed; the start is a fenced,
// conditional claim, so no run is ever started twice.
func (e *Engine) DequeueAndStart(ctx context.Context) ([]QueueResult, error) {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: store.KeyPrefix("rq"), Limit: 256})
	if err != nil {
		return nil, err
	}
	var out []QueueResult
	for _, it := range res.Items {
		runID := string(it.Value)
		started := false
		owned, err := (*background)(e).driveOwned(ctx, runID, func(ch *change) error {
			started = false // a decision made again after a lost race starts afresh
			if ch.state.Status != runstate.RunQueued {
				ch.del(it.Key) // started elsewhere, or cancelled: the index entry is stale
				return nil
			}
			if err := ch.rules().Admit(); err != nil {
				return err
			}
			started = ch.state.Status != runstate.RunQueued
			return nil
		})
		var lostSlot *store.ConditionFailedError
		switch {
		case errors.As(err, &lostSlot):
			out = append(out, QueueResult{RunID: runID, Status: "SKIPPED"}) // another engine took the slot: next pass
		case err != nil:
			out = append(out, QueueResult{RunID: runID, Status: "FAILED"})
		case started && owned: // not when this engine learned it was stale: its last attempt lost its race
			out = append(out, QueueResult{RunID: runID, Status: "STARTED"})
		default:
			out = append(out, QueueResult{RunID: runID, Status: "SKIPPED"})
		}
	}
	return out, nil
}
