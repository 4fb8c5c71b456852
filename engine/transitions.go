package engine

import (
	"fmt"

	"github.com/weft-dev/weft/engine/runstate"
)

// illegalRun answers the error for a refused run transition.
func illegalRun(runID string, from, to runstate.RunStatus) *Error {
	t := fmt.Sprintf("%s -> %s", from, to)
	return &Error{
		Code:       CodeIllegalTransition,
		Message:    fmt.Sprintf("run %s cannot go %s", runID, t),
		RunID:      runID,
		RunStatus:  from,
		Transition: t,
	}
}

// illegalStep answers the error for a refused step transition.
func illegalStep(runID, actionID string, from, to runstate.StepStatus) *Error {
	t := fmt.Sprintf("%s -> %s", from, to)
	return &Error{
		Code:       CodeIllegalTransition,
		Message:    fmt.Sprintf("step %s of run %s cannot go %s", actionID, runID, t),
		RunID:      runID,
		ActionID:   actionID,
		Transition: t,
	}
}
