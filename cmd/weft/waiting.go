package main

import (
	"fmt"
	"strings"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// waitingOn says why a run that is not finished does not move on, from its
// status and its steps: the signal a step waits for, a manual step, a step
// the run is held on after its failure (onFailure: hold) and what clears
// it, a start or an approval it waits for, a slot it is queued for, or a
// pause. It answers "" for a run that is moving or finished. `weft list`
// and `weft get` print it; the console says the same (console/src/waiting.ts).
func waitingOn(run *weftv1.Run) string {
	var parts []string
	for _, s := range run.GetSteps() {
		if w := stepWait(run, s); w != "" {
			parts = append(parts, w)
		}
	}
	switch run.GetStatus() {
	case weftv1.RunStatus_RUN_STATUS_PENDING:
		switch {
		case run.GetDefinition() == nil: // weft list: runs without their definitions
			return "a start or an approval: weft get " + run.GetRunId()
		case run.GetDefinition().GetRequiresApproval():
			return "approval: weft approve " + run.GetRunId()
		}
		return "a start: weft start " + run.GetRunId()
	case weftv1.RunStatus_RUN_STATUS_APPROVED:
		return "a start: weft start " + run.GetRunId()
	case weftv1.RunStatus_RUN_STATUS_QUEUED:
		if w := run.GetConcurrency().GetWait(); w != "" { // docs/semantics.md#run-concurrency
			return "a slot: " + w + " (queued)"
		}
		return "a slot: the plan's or tenant's concurrency limit is reached (queued)"
	case weftv1.RunStatus_RUN_STATUS_PAUSED:
		parts = append([]string{"resume: weft resume " + run.GetRunId()}, parts...)
	case weftv1.RunStatus_RUN_STATUS_BLOCKED, weftv1.RunStatus_RUN_STATUS_RUNNING:
	default:
		return ""
	}
	return strings.Join(parts, "; ")
}

// stepWait says what one step of an unfinished run waits for, or "".
func stepWait(run *weftv1.Run, s *weftv1.Step) string {
	id := s.GetActionId()
	switch s.GetStatus() {
	case weftv1.StepStatus_STEP_STATUS_WAITING_FOR_SIGNAL:
		return fmt.Sprintf("signal %s (step %s): weft signal %s %s", s.GetWaitingForSignal(), id, run.GetRunId(), s.GetWaitingForSignal())
	case weftv1.StepStatus_STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION:
		return fmt.Sprintf("manual step %s: weft complete %s %s --token %s --actor NAME", id, run.GetRunId(), id, s.GetCompletionToken())
	case weftv1.StepStatus_STEP_STATUS_SCHEDULED, weftv1.StepStatus_STEP_STATUS_RUNNING:
		if w := s.GetWakeAt(); w != nil { // docs/semantics.md#sleep
			return fmt.Sprintf("sleep of step %s: wakes by itself at %s", id, when(w))
		}
		if f := s.GetFlowWait(); f != "" {
			return fmt.Sprintf("flow control (step %s): %s", id, f)
		}
	case weftv1.StepStatus_STEP_STATUS_FAILED:
		if run.GetStatus() == weftv1.RunStatus_RUN_STATUS_BLOCKED || run.GetStatus() == weftv1.RunStatus_RUN_STATUS_PAUSED {
			return fmt.Sprintf("held on failure of %s: weft retry-step %s %s, or weft skip-step %s %s", id, run.GetRunId(), id, run.GetRunId(), id)
		}
	}
	return ""
}

// waitingShort is waitingOn for a table cell: what is waited for, without
// the command that ends the wait.
func waitingShort(run *weftv1.Run) string {
	long := waitingOn(run)
	if long == "" {
		return ""
	}
	parts := strings.Split(long, "; ")
	for i, p := range parts {
		parts[i], _, _ = strings.Cut(p, ":")
	}
	return strings.Join(parts, "; ")
}
