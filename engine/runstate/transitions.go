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
	// RerunRun takes an ended run back to RUNNING (docs/semantics.md#rerun).
	RunCompleted: {RunRunning},
	RunFailed:    {RunRunning},
	RunCancelled: {RunRunning},
}

// cancelCompensationTransitions are legal only while a rollback a cancel asked
// for runs (docs/semantics.md#cancel-compensation): it ends CANCELLED, never FAILED.
var cancelCompensationTransitions = map[RunStatus][]RunStatus{
	RunCompensating: {RunCancelled},
}

// stepTransitions is the one table of legal step transitions (docs/semantics.md#step-transitions).
// FAILED → PENDING is RETRY_STEP's new logical
// attempt, and the retry policy's next engine attempt; SUCCEEDED, SKIPPED,
// FAILED and CANCELLED → PENDING is a rerun's (docs/semantics.md#rerun), and
// SCHEDULED → SUCCEEDED a rerun's verify that found the side effect done.
var stepTransitions = map[StepStatus][]StepStatus{
	StepPending:       {StepScheduled, StepRunning, StepWaitingManual, StepWaitingSignal, StepSkipped, StepCancelled},
	StepScheduled:     {StepRunning, StepCancelled, StepPending, StepFailed, StepSucceeded},
	StepRunning:       {StepSucceeded, StepFailed, StepCancelled, StepWaitingManual, StepPending},
	StepWaitingManual: {StepSucceeded, StepFailed, StepCancelled},
	StepWaitingSignal: {StepSucceeded, StepFailed, StepCancelled},
	StepSucceeded:     {StepPending},
	StepFailed:        {StepPending, StepSkipped},
	StepSkipped:       {StepPending},
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

// RunTransitionAllowedFor reports whether run s may go from its status to
// another: the table above, and COMPENSATING → CANCELLED only when a cancel
// asked for the compensation in progress.
func RunTransitionAllowedFor(s *State, to RunStatus) bool {
	return RunTransitionAllowedWhen(s.Status, to, s.Compensation != nil && s.Compensation.ForCancel)
}

// RunTransitionAllowedWhen reports whether a run may go from one status to
// another, given whether the compensation in progress is a cancel's.
func RunTransitionAllowedWhen(from, to RunStatus, cancelCompensation bool) bool {
	if RunTransitionAllowed(from, to) {
		return true
	}
	if !cancelCompensation {
		return false
	}
	for _, s := range cancelCompensationTransitions[from] {
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
