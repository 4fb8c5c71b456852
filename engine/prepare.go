package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// prepared is what a decision read for its rules before they ran: the
// rules' values (decide.Prepared) and the free slots behind
// decide.SlotsFree, which the decision takes (decide.Recorder.TakeSlots).
type prepared struct {
	rules     decide.Prepared
	freeSlots [][]byte
}

// prepare reads, under the run's lock and before any rule runs, what the
// rules may need of the store for a decision on state: the reconciliation
// records of the reconcilable steps that have not ended (of an ended run:
// of every reconcilable step, which a rerun may reopen), the payloads of
// the accepted signals a step may consume, and the run's concurrency slots
// when the decision may admit it or rerun it (docs/semantics.md#rerun). Each key is read once; a read that fails
// — anything but "not found" — fails the decision. A run in none of those
// states reads nothing.
func prepare(ctx context.Context, e *Engine, run *record.Run, state *runstate.State) (prepared, error) {
	var p prepared
	if err := prepareRecons(ctx, e, run, state, &p.rules); err != nil {
		return p, err
	}
	if err := preparePayloads(ctx, e, run, state, &p.rules); err != nil {
		return p, err
	}
	if !mayAdmit(run, state) {
		return p, nil
	}
	p.rules.Slots = decide.SlotsFree
	if limits := e.cfg.limitsOf(run); len(limits) > 0 {
		keys, full, err := admission.FreeSlots(ctx, e.store, limits)
		switch {
		case err != nil:
			return p, fmt.Errorf("read the concurrency slots of run %s: %w", run.RunID, err)
		case full != nil:
			p.rules.Slots = decide.SlotsFull
		}
		p.freeSlots = keys
	}
	if err := prepareKey(ctx, e, run, state, &p); err != nil {
		return p, err
	}
	if p.rules.KeyFull {
		p.rules.Slots = decide.SlotsFull
	}
	return p, nil
}

// mayAdmit reports whether a decision on state may admit the run (Trigger,
// Admit): it has not started yet; or may take it back to RUNNING (Rerun):
// it has ended.
func mayAdmit(run *record.Run, state *runstate.State) bool {
	if state.Status.Terminal() {
		return true
	}
	switch state.Status {
	case runstate.RunQueued, runstate.RunApproved:
		return true
	case runstate.RunPending:
		return !run.Definition.RequiresApproval
	}
	return false
}

// prepareRecons reads the reconciliation record of every reconcilable step
// that has not ended, for its current logical attempt; of an ended run, of
// every reconcilable step (a rerun verifies before it reopens one).
func prepareRecons(ctx context.Context, e *Engine, run *record.Run, state *runstate.State, p *decide.Prepared) error {
	for _, st := range state.Steps {
		if !st.Reconcile || (st.Status.Terminal() && !state.Status.Terminal()) {
			continue
		}
		a := run.Action(st.ActionID)
		key := reconKey(run.RunID, a.Activity, operationID(run.RunID, a.ID, st.LogicalAttempt))
		value, found, err := getValue(ctx, e.store, key)
		if err != nil || !found {
			if err != nil {
				return err
			}
			continue
		}
		var r reconRecord
		if err := json.Unmarshal(value, &r); err != nil {
			return fmt.Errorf("decode the reconciliation record %s: %w", key, err)
		}
		if p.Recons == nil {
			p.Recons = make(map[string]decide.Recon, 1)
		}
		p.Recons[st.ActionID] = decide.Recon{Logical: st.LogicalAttempt, Status: r.Status, Result: r.Result, Err: r.Error,
			Key: r.IdempotencyKey, Diagnostic: r.Diagnostic, CreatedAt: r.CreatedAt}
	}
	return nil
}

// preparePayloads reads the payload of every accepted signal that a step of
// the run may still consume: one whose name a step waits for, or will,
// while that step has not ended (or is the failed step a held run may
// retry). A run that has ended consumes none.
func preparePayloads(ctx context.Context, e *Engine, run *record.Run, state *runstate.State, p *decide.Prepared) error {
	if len(state.Signals) == 0 || state.Status.Terminal() {
		return nil
	}
	for _, sig := range state.Signals {
		if !mayConsume(run, state, sig.Name) {
			continue
		}
		if _, ok := p.Payloads[sig.StorageKey]; ok {
			continue
		}
		value, found, err := getValue(ctx, e.store, []byte(sig.StorageKey))
		switch {
		case err != nil:
			return err
		case !found:
			return fmt.Errorf("read the payload of signal %s of run %s: %w", sig.ID, run.RunID, store.ErrNotFound)
		}
		if p.Payloads == nil {
			p.Payloads = make(map[string]json.RawMessage, len(state.Signals))
		}
		p.Payloads[sig.StorageKey] = value
	}
	return nil
}

// mayConsume reports whether a step of the run may consume a signal named
// name: it waits for that name and has not ended, or is the step the run is
// held on.
func mayConsume(run *record.Run, state *runstate.State, name string) bool {
	for i := range run.Definition.Actions {
		a := &run.Definition.Actions[i]
		if a.WaitForSignal == nil || a.WaitForSignal.SignalName != name {
			continue
		}
		if st := state.Step(a.ID); st != nil && (!st.Status.Terminal() || state.HeldOn == a.ID) {
			return true
		}
	}
	return false
}

// getValue reads key: its value, or found false when the store has none.
// Any other error is answered, never taken for "absent".
func getValue(ctx context.Context, st store.Store, key []byte) (value []byte, found bool, err error) {
	item, err := st.Get(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read %s: %w", key, err)
	}
	return item.Value, true, nil
}
