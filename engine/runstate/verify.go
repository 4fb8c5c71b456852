package runstate

// VerifyState is what a verify function found about an operation whose
// outcome was lost (docs/semantics.md#reconciliation), as a StepVerified
// event records it.
type VerifyState string

// The verify states.
const (
	VerifyNotCompleted               VerifyState = "not-completed"
	VerifyCompletedWithResult        VerifyState = "completed-with-result"
	VerifyCompletedResultUnavailable VerifyState = "completed-result-unavailable"
	VerifyIndeterminate              VerifyState = "indeterminate"
)
