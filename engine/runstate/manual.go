package runstate

import "time"

// ManualOutcome is what a person reports for a manual action.
type ManualOutcome string

// The manual outcomes (docs/semantics.md#manual-completion).
const (
	ManualSucceeded ManualOutcome = "SUCCEEDED"
	ManualFailed    ManualOutcome = "FAILED"
	ManualCancelled ManualOutcome = "CANCELLED"
)

// ManualResult is the canonical result of an accepted manual completion.
type ManualResult struct {
	RunID           string        `json:"run_id" wire:"1"`
	ActionID        string        `json:"action_id" wire:"2"`
	CompletionToken string        `json:"completion_token" wire:"3"`
	Outcome         ManualOutcome `json:"outcome" wire:"4"`
	ActorUserID     string        `json:"actor_user_id" wire:"5"`
	AcceptedAt      time.Time     `json:"accepted_at" wire:"6"`
	Principal       string        `json:"principal,omitempty" wire:"7"`
	Notes           string        `json:"notes,omitempty" wire:"8"`
	EvidenceRefs    []string      `json:"evidence_refs,omitempty" wire:"9"`
}

// ManualResultOf answers the manual completion a SignalAccepted event records.
func ManualResultOf(ev Event) *ManualResult {
	d := &ev.Data
	return &ManualResult{RunID: ev.RunID, ActionID: ev.StepID, CompletionToken: d.CompletionToken,
		Outcome: ManualOutcome(d.ManualOutcome), ActorUserID: d.Actor, AcceptedAt: d.AcceptedAt, Principal: d.Principal,
		Notes: d.Notes, EvidenceRefs: d.EvidenceRefs}
}
