package runstate

// runTransitions is the one table of legal run transitions (docs/semantics.md#run-transitions). Everything absent is illegal.
var runTransitions = map[RunStatus][]RunStatus{
	RunPending:      {RunApproved, RunQueued, RunCancelled},
	RunApproved:     {RunQueued, RunCancelled},
	RunQueued:       {RunRunning, RunCancelled},
	RunRunning:      {RunBlocked, RunPaused, RunCompensating, RunCompleted, RunFailed, RunCancelled},
	RunBlocked:      {RunRunning, RunPaused, RunCompensating, RunFailed, RunCancelled},
	RunPaused:       {RunRunning, RunBlocked, RunCompensating, RunFailed, RunCancelled},
	RunCompensating: {RunFailed},
}

// stepTransitions is the one table of legal step transitions (docs/semantics.md#step-transitions).
// FAILED → PENDING is RETRY_STEP's new logical
// attempt, and the retry policy's next engine attempt.
var stepTransitions = map[StepStatus][]StepStatus{
	StepPending:       {StepScheduled, StepRunning, StepWaitingManual, StepWaitingSignal, StepSkipped, StepCancelled},
	StepScheduled:     {StepRunning, StepCancelled, StepPending, StepFailed},
	StepRunning:       {StepSucceeded, StepFailed, StepCancelled, StepWaitingManual, StepPending},
	StepWaitingManual: {StepSucceeded, StepFailed, StepCancelled},
	StepWaitingSignal: {StepSucceeded, StepFailed, StepCancelled},
	StepFailed:        {StepPending, StepSkipped},
	StepCancelled:     {StepPending, StepSkipped},
}

// RunTransitionAllowed reports whether a run may go from one status to another.
func RunTransitionAllowed(from, to RunStatus) bool {
	for _, s := range runTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// StepTransitionAllowed reports whether a step may go from one status to another.
func StepTransitionAllowed(from, to StepStatus) bool {
	for _, s := range stepTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}
