package runstate

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/definition"
)

// Snapshot is an immutable view of a run at LastEventSeq.
type Snapshot struct {
	RunID         string
	TenantID      string
	ProjectID     string
	EnvironmentID string
	PlanID        string
	PlanVersion   string
	RunRequestID  string
	SubmittedBy   string
	// TriggerSource is api, manual or schedule (docs/semantics.md#trigger-source).
	TriggerSource       string
	Status              RunStatus
	Substatus           string
	Message             string
	Steps               []StepState
	CompensationOutcome CompensationOutcome
	CreatedAt           time.Time
	StartedAt           time.Time
	CompletedAt         time.Time
	TotalDuration       time.Duration
	LastEventSeq        uint64
	Error               *RunError
	Cancellation        *Cancellation
	Definition          definition.Definition
	Input               json.RawMessage
	Artifacts           []ArtifactRef
	Deadline            time.Time
	// Result is the output of the action Definition.ResultActionID names,
	// once the run is COMPLETED and that action SUCCEEDED; nil otherwise
	// (docs/semantics.md#a-runs-result).
	Result json.RawMessage
	// FlowWaits says, by action id, why flow control holds a step's ready
	// task when the run was read ("concurrency key customer-42 at 2/2",
	// "throttled by key payments until …"; docs/semantics.md#flow-visibility).
	// Read by GetRun; nil otherwise.
	FlowWaits map[string]string
	// Concurrency is the run's concurrency key and its figures when GetRun
	// read it (docs/semantics.md#run-concurrency); nil without a key, and
	// where the run was not read by GetRun.
	Concurrency *KeyConcurrency
	// Priority is the run's priority, 1 (first) to 5
	// (docs/semantics.md#priority).
	Priority int
	// RetainUntil is when retention removes the finished run; zero while it
	// is not finished, or kept until deleted (docs/semantics.md#retention).
	// The checkpoint knows it; a projection from the log does not.
	RetainUntil time.Time
	// StepFailures is the failed-steps counter (FailedSteps).
	StepFailures int
	// SearchAttributes are the run's search attributes, sorted by name.
	SearchAttributes []SearchAttribute
	// ParentRunID and ParentStep name the run and step that started this
	// run as a child (docs/semantics.md#sub-workflows); empty otherwise.
	ParentRunID string
	ParentStep  string
}

// RunResult answers the run's result: the output of the action the
// definition names, once the run is COMPLETED and that action SUCCEEDED.
func (s *Snapshot) RunResult() json.RawMessage {
	id := s.Definition.ResultActionID
	if id == "" || s.Status != RunCompleted {
		return nil
	}
	if st := s.Step(id); st != nil && st.Status == StepSucceeded {
		return st.Output
	}
	return nil
}

// Step answers the snapshot of one step, or nil.
func (s *Snapshot) Step(actionID string) *StepState {
	for i := range s.Steps {
		if s.Steps[i].ActionID == actionID {
			return &s.Steps[i]
		}
	}
	return nil
}

// FailedSteps answers the run's failed-steps counter (failedSteps,
// docs/semantics.md#resync): every StepFailed makes one more — a step that
// failed and was then skipped still counts — and a RETRY_STEP that reopens
// a failed step one less.
func (s *Snapshot) FailedSteps() int { return s.StepFailures }

// Clone answers a copy of s that reduction may change without changing s:
// the steps and their attempts are copied, and the artifact list is clipped
// so that an append reallocates. The definition and input, which reduction
// never changes, are shared.
func (s *Snapshot) Clone() *Snapshot {
	out := *s
	out.Steps = make([]StepState, len(s.Steps))
	for i, st := range s.Steps {
		st.Attempts = append([]Attempt(nil), st.Attempts...)
		out.Steps[i] = st
	}
	out.Artifacts = slices.Clip(s.Artifacts)
	return &out
}

// FanOut is how a forEach step's items stand (docs/semantics.md#for-each).
type FanOut struct {
	Items, MaxConcurrency                           int
	Pending, InFlight, Succeeded, Failed, Cancelled int
}

// FanOuts answers, by forEach step, how its items stand: the steps that
// have fanned out, each counted over the items of its current list.
func (s *Snapshot) FanOuts() map[string]FanOut {
	var out map[string]FanOut
	for i := range s.Steps {
		st := &s.Steps[i]
		if !st.IsItem() {
			continue
		}
		parent := s.Step(st.Parent)
		if parent == nil || st.Index >= parent.ItemCount {
			continue
		}
		if out == nil {
			out = map[string]FanOut{}
		}
		f := out[st.Parent]
		f.Items = parent.ItemCount
		if a := s.Definition.Action(st.Parent); a != nil {
			f.MaxConcurrency = a.MaxConcurrency
		}
		switch st.Status {
		case StepPending:
			f.Pending++
		case StepSucceeded:
			f.Succeeded++
		case StepFailed:
			f.Failed++
		case StepCancelled, StepSkipped:
			f.Cancelled++
		default:
			f.InFlight++
		}
		out[st.Parent] = f
	}
	return out
}

// KeyConcurrency is a run's concurrency key as GetRun shows it: the key,
// the definition's limit and strategy, the runs of the key holding a slot,
// and why a QUEUED run waits ("concurrency key customer-42 at 2/2").
type KeyConcurrency struct {
	Key      string
	Limit    int
	Strategy string
	InUse    int
	Wait     string
}
