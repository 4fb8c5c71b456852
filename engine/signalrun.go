package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/engine/internal/acceptance"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// signalKindPrefix starts the reserved names of the signals the engine
// sends itself (pause, resume, cancel…); a user signal may not use it.
const signalKindPrefix = "weft:"

// DefaultSignalRetention is how long an accepted-response record answers
// duplicates before retention may remove it.
const DefaultSignalRetention = 7 * 24 * time.Hour

// MaxSignalIDBytes bounds a signal_id (docs/semantics.md#signal-idempotency).
const MaxSignalIDBytes = 128

// AcceptedSignal is the canonical AcceptedSignalResult
// (docs/semantics.md#accepted-signal-record; package acceptance).
type AcceptedSignal = acceptance.Signal

// SignalParams is a signal to a run.
type SignalParams struct {
	TenantID   string
	RunID      string
	SignalName string
	// SignalID, when non-nil, makes delivery idempotent; nil means a fresh id.
	SignalID *string
	Payload  json.RawMessage
	Actor    string
	// Compensate, for a cancel, records on its SignalAccepted that compensation was asked.
	Compensate bool
}

// SignalResult answers a signal.
type SignalResult struct {
	Result    AcceptedSignal
	Duplicate bool
}

// validateSignalID applies the validation of docs/semantics.md#signal-idempotency before anything is written.
func validateSignalID(field string, id *string) error {
	if id == nil {
		return nil
	}
	switch {
	case *id == "":
		return fault.Invalid(fault.Violation(field, "signal_id.non_empty", "signal_id must not be empty when present"))
	case len(*id) > MaxSignalIDBytes:
		return fault.Invalid(fault.Violation(field, "signal_id.max_bytes", "signal_id must be at most %d UTF-8 bytes, got %d", MaxSignalIDBytes, len(*id)))
	case !utf8.ValidString(*id):
		return fault.Invalid(fault.Violation(field, "signal_id.utf8", "signal_id must be valid UTF-8"))
	}
	return nil
}

// SignalRun accepts a named signal for a run: an atomic insert-or-read of the
// accepted-response record together with the payload, so a duplicate
// (run, name, signal_id) answers the first acceptance and enqueues nothing.
func (e *Engine) SignalRun(ctx context.Context, p SignalParams) (*SignalResult, error) {
	if err := validateSignalID("signal_id", p.SignalID); err != nil {
		return nil, err
	}
	if p.SignalName == "" || strings.HasPrefix(p.SignalName, signalKindPrefix) {
		return nil, fault.Invalid(fault.Violation("signal_name", "signal_name.reserved",
			"signal_name must be non-empty and must not start with %q", signalKindPrefix))
	}
	if len(p.Payload) > 0 && !json.Valid(p.Payload) {
		return nil, fault.Invalid(fault.Violation("payload", "payload.json", "payload must be valid JSON"))
	}
	return deliverSignal(ctx, e, p, runstate.SignalUser, func(ch *change, acc AcceptedSignal) error {
		return fault.Refused(ch.rules().AcceptSignal(runstate.PendingSignal{Name: acc.SignalName, ID: acc.SignalID,
			StorageKey: acc.SignalStorageKey}, payloadOrNull(p.Payload)))
	})
}

// deliver is the idempotent acceptance every signal (user or control) goes
// through. Duplicates are recognised before any state check, so a retry is
// answered with the original result even after the run has moved on.
func deliverSignal(ctx context.Context, e *Engine, p SignalParams, kind runstate.SignalKind,
	apply func(*change, AcceptedSignal) error) (*SignalResult, error) {
	if _, err := e.records.RunFor(ctx, p.TenantID, p.RunID); err != nil {
		return nil, err
	}
	name := p.SignalName
	if kind != runstate.SignalUser {
		name = signalKindPrefix + string(kind)
	}
	idempotent := p.SignalID != nil
	id := uuid.NewString()
	if idempotent {
		id = *p.SignalID
		if !e.store.Capabilities().ConditionalBatch {
			return nil, fault.CapabilityUnavailable(p.RunID, "conditionalBatch",
				"idempotent signal delivery needs a store with conditionalBatch; "+e.store.Capabilities().Backend+" has none")
		}
	}
	var (
		result   AcceptedSignal
		rejected error
		prior    *SignalResult
	)
	_, err := commitDecision(ctx, e, decision{runID: p.RunID, actor: decide.ActorOf(p.Actor),
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			if !idempotent {
				return p.RunID, false, nil
			}
			// The one read of the signal's payload key: an earlier
			// acceptance is answered as it was. The decision's batch
			// requires that neither of its records exists, so a signal
			// accepted after this read fails that condition and is
			// answered the same way.
			var err error
			prior, err = priorAcceptance(ctx, e.store, p.RunID, name, id)
			return p.RunID, prior != nil || err != nil, err
		},
		decide: func(ch *change) error {
			rejected = nil // a decision made again decides afresh
			result = AcceptedSignal{Accepted: true, RunID: p.RunID, SignalName: name, SignalID: id, AcceptedAt: ch.now,
				SignalStorageKey: string(acceptance.PayloadKey(p.RunID, name, id))}
			requireNewSignal(ch, result)
			sp := ch.savepoint()
			recordAcceptance(ch, kind, result, p.Payload, p.Compensate)
			if err := apply(ch, result); err != nil {
				if !isRejection(err) {
					return err
				}
				ch.rollback(sp) // the acceptance goes; its conditions stay: a duplicate is never rejected
				rejected = err
				ch.rules().Rejected("", runstate.EventData{SignalKind: kind, SignalName: name, SignalID: id, Actor: ch.actor, Reason: err.Error()})
			}
			return nil
		},
	})
	switch {
	case prior != nil:
		return prior, nil
	case idempotent && (conflictOn(err, acceptance.RecordKey(p.RunID, name, id)) || conflictOn(err, acceptance.PayloadKey(p.RunID, name, id))):
		return priorAcceptance(ctx, e.store, p.RunID, name, id) // accepted since the read: answered as it was
	}
	if err == nil && rejected != nil {
		err = rejected
	}
	if err != nil {
		return nil, err
	}
	return &SignalResult{Result: result}, nil
}

// isRejection reports whether a decision refused the signal for the run's
// state (logged as SignalRejected) rather than failing.
func isRejection(err error) bool {
	var b *fault.BrokenRule
	if errors.As(err, &b) {
		return false // the engine's own fault fails the whole decision
	}
	switch CodeOf(err) {
	case CodeIllegalTransition, CodeOperationConflict, CodePermissionDenied:
		return true
	}
	return false
}

// priorAcceptance answers the stored result of an earlier acceptance, or the
// indeterminate fault when only the payload is durable
// (docs/semantics.md#signal-crash-window), or nil when the signal is new.
func priorAcceptance(ctx context.Context, st store.Store, runID, name, id string) (*SignalResult, error) {
	prior, err := acceptance.PriorSignal(ctx, st, runID, name, id)
	if errors.Is(err, acceptance.ErrIndeterminate) {
		return nil, fault.SignalIndeterminate(runID, name, id)
	}
	if prior == nil || err != nil {
		return nil, err
	}
	return &SignalResult{Result: *prior, Duplicate: true}, nil
}

// payloadOrNull answers a signal's payload as stored: JSON null when it has none.
func payloadOrNull(payload json.RawMessage) json.RawMessage {
	if len(payload) == 0 {
		return json.RawMessage("null")
	}
	return payload
}

// requireNewSignal conditions the decision's batch on the signal's payload
// and accepted-response record being absent: whether the decision accepts
// the signal or logs its rejection, it commits only if no acceptance of the
// same signal committed first.
func requireNewSignal(c *change, acc AcceptedSignal) {
	c.require(store.IfAbsent(acceptance.RecordKey(acc.RunID, acc.SignalName, acc.SignalID)))
	c.require(store.IfAbsent(acceptance.PayloadKey(acc.RunID, acc.SignalName, acc.SignalID)))
}

// recordAcceptance writes the payload and the accepted-response record
// (requireNewSignal conditions both) and logs SignalAccepted.
func recordAcceptance(c *change, kind runstate.SignalKind, acc AcceptedSignal, payload json.RawMessage, compensate bool) {
	sigKey := acceptance.PayloadKey(acc.RunID, acc.SignalName, acc.SignalID)
	accKey := acceptance.RecordKey(acc.RunID, acc.SignalName, acc.SignalID)
	c.ops = append(c.ops, store.Put(sigKey, payloadOrNull(payload)))
	expires := acc.AcceptedAt.Add(c.e.cfg.SignalRetention)
	c.put(accKey, acceptance.Record{FormatVersion: record.Version, RunID: acc.RunID, SignalName: acc.SignalName,
		SignalID: acc.SignalID, SignalStorageKey: acc.SignalStorageKey, Response: acc, AcceptedAt: acc.AcceptedAt,
		ExpiresAt: expires})
	c.ops = append(c.ops, store.Put(acceptance.ExpiryKey(expires, acc.RunID, acc.SignalName, acc.SignalID), nil))
	c.state.SignalCount++
	c.emit(runstate.EvSignalAccepted, "", c.state.SignalCount, 0, runstate.EventData{SignalKind: kind, SignalName: acc.SignalName,
		SignalID: acc.SignalID, SignalStorageKey: acc.SignalStorageKey, AcceptedAt: acc.AcceptedAt, Actor: c.actor, Compensate: compensate})
}
