package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/internal/acceptance"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// ManualCompletionParams is the manual completion of docs/semantics.md#manual-completion.
type ManualCompletionParams struct {
	TenantID        string
	RunID           string
	ActionID        string
	CompletionToken string
	Outcome         runstate.ManualOutcome
	// ActorUserID is the person completing the action, as the caller
	// declared; recorded beside Principal.
	ActorUserID string
	// Principal is the authenticated principal the call runs as (the bearer
	// token's name); empty when the server authenticates nobody. Separation
	// of duties is decided on it (docs/semantics.md#separation-of-duties).
	Principal    string
	CompletedAt  time.Time
	Notes        string
	EvidenceRefs []string
	Output       json.RawMessage
}

// ManualCompletionResult answers a manual completion.
type ManualCompletionResult struct {
	Result    runstate.ManualResult
	Duplicate bool
}

// SeparationOfDuties is the default completion policy: the principal
// completing a manual action may not be the one that submitted the run. It is
// decided on the authenticated principal, never on the declared actor, which
// a caller can write freely; only a server that authenticates nobody (where
// Principal is empty) falls back on the declared actor
// (docs/semantics.md#separation-of-duties).
func SeparationOfDuties(_ context.Context, run *RunInfo, req *ManualCompletionParams) error {
	if run.SubmittedBy != "" && req.completedBy() == run.SubmittedBy {
		return fault.PermissionDenied(run.RunID, req.ActionID, "separation of duties: the run's submitter may not complete its manual actions")
	}
	return nil
}

// completedBy names who completes: the authenticated principal, or the
// declared actor on a server that authenticates nobody.
func (m *ManualCompletionParams) completedBy() string { return cmp.Or(m.Principal, m.ActorUserID) }

// CompleteManualAction applies docs/semantics.md#manual-completion: idempotent on (run, action,
// token), with duplicates recognised before the state check — also one
// accepted while this call waited its turn, so concurrent retries all get the
// original result — then the completion policy, then the transition, with the
// token matched to the open wait. A refusal for the run's state, the token or
// the policy is logged as SignalRejected.
func (e *Engine) CompleteManualAction(ctx context.Context, m ManualCompletionParams) (*ManualCompletionResult, error) {
	run, err := e.records.RunFor(ctx, m.TenantID, m.RunID)
	if err != nil {
		return nil, err
	}
	if len(m.Output) > 0 {
		if err := checkOutput(m.Output, e.cfg.InlineResultLimit); err != nil {
			return nil, err
		}
	}
	key := acceptance.ManualKey(m.RunID, m.ActionID, m.CompletionToken)
	if prior, err := priorManual(ctx, e.store, key); prior != nil || err != nil {
		return prior, err
	}
	denied := e.cfg.CompletionPolicy(ctx, runInfo(run), &m)
	if denied != nil && !isRejection(denied) {
		return nil, denied
	}
	var result runstate.ManualResult
	var rejected error
	_, err = mutate(ctx, e, m.RunID, "operator:"+m.completedBy(), func(ch *change) error {
		rejected = nil // a decision made again decides afresh
		if _, err := ch.e.store.Get(ch.ctx, key); err == nil {
			return errDuplicateManual // accepted while this request waited its turn
		}
		st := ch.state.Step(m.ActionID)
		if st == nil {
			return fault.NoAction(m.RunID, m.ActionID)
		}
		if rejected = denied; rejected == nil {
			rejected = fault.Refused(ch.rules().ManualRefusal(st, m.Outcome, m.CompletionToken))
		}
		if rejected != nil {
			ch.rules().Rejected(m.ActionID, runstate.EventData{SignalKind: runstate.SignalManual, Actor: m.ActorUserID,
				Principal: m.Principal, Reason: rejected.Error()})
			return nil
		}
		result = runstate.ManualResult{RunID: m.RunID, ActionID: m.ActionID, CompletionToken: m.CompletionToken,
			Outcome: m.Outcome, ActorUserID: m.ActorUserID, AcceptedAt: ch.now, Principal: m.Principal,
			Notes: m.Notes, EvidenceRefs: m.EvidenceRefs}
		ch.require(store.IfAbsent(key))
		ch.put(key, result)
		return ch.rules().ApplyManual(st, result, m.completedBy(), m.Output)
	})
	if errors.Is(err, errDuplicateManual) || conflictOn(err, key) {
		return priorManual(ctx, e.store, key)
	}
	if err == nil && rejected != nil {
		err = rejected
	}
	if err != nil {
		return nil, err
	}
	return &ManualCompletionResult{Result: result}, nil
}

// errDuplicateManual ends a decision that found the completion already accepted.
var errDuplicateManual = errors.New("manual completion already accepted")

// priorManual answers a stored manual completion, or nil.
func priorManual(ctx context.Context, st store.Store, key []byte) (*ManualCompletionResult, error) {
	prior, err := acceptance.PriorManual(ctx, st, key)
	if prior == nil || err != nil {
		return nil, err
	}
	return &ManualCompletionResult{Result: *prior, Duplicate: true}, nil
}
