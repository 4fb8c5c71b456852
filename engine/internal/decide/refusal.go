package decide

import "github.com/weft-dev/weft/engine/runstate"

// Move is a transition of a run, or of one of its steps when ActionID is
// set, from one status to another.
type Move struct {
	RunID, ActionID string
	Status          runstate.RunStatus // the run's status, reported with a refusal
	From, To        string
	Signal          string // the signal refused, when the move was its delivery
	Why             string // the message; "" names the run or step and the move
}

// RunMove is the run's transition from one status to another.
func RunMove(runID string, from, to runstate.RunStatus) Move {
	return Move{RunID: runID, Status: from, From: string(from), To: string(to)}
}

// StepMove is one step's transition from one status to another.
func StepMove(runID, actionID string, from, to runstate.StepStatus) Move {
	return Move{RunID: runID, ActionID: actionID, From: string(from), To: string(to)}
}

// Reason is why a request is refused.
type Reason int

// The reasons.
const (
	// IllegalMove: the run's or step's status does not allow the move.
	IllegalMove Reason = iota
	// Conflict: the request contradicts what the run already recorded.
	Conflict
	// NoAction: the run has no action Move.ActionID.
	NoAction
)

// Refusal is a request the run's state does not allow: an operator's
// control or a signal. The engine answers it with its own coded error, and
// logs a refused signal as SignalRejected.
type Refusal struct {
	Reason Reason
	Move   Move
}

// Error implements error.
func (r *Refusal) Error() string {
	if r.Move.Why != "" {
		return r.Move.Why
	}
	return "run " + r.Move.RunID + " refused " + r.Move.From + " -> " + r.Move.To
}

func refuse(reason Reason, m Move) *Refusal { return &Refusal{Reason: reason, Move: m} }

// illegal refuses a move.
func illegal(m Move) *Refusal { return refuse(IllegalMove, m) }

// noAction refuses a request that names an action the run does not have.
func noAction(runID, actionID string) *Refusal {
	return refuse(NoAction, Move{RunID: runID, ActionID: actionID, Why: "run " + runID + " has no action " + actionID})
}
