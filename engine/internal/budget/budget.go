// Package budget is the write latency budget of
// docs/semantics.md#write-latency-budget: how long a decision's commit may
// take, and which decisions it binds. A decision that appends an event of a
// never-fail-open class (a step's completion or failure) is abandoned at the
// budget, so that its caller retries it whole; one that appends only
// fail-open classes (a step's start), or none, is waited for and logged
// when slow.
//
// Layering: it may import the standard library and engine/runstate only.
package budget

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
)

// Default is the budget when none is configured.
const Default = 3 * time.Second

// Budget is the write latency budget and the event classes it binds.
type Budget struct {
	Limit time.Duration
	// FailOpen are the event classes whose decisions are waited for and
	// logged past the budget; NeverFailOpen those whose decisions are
	// abandoned at it.
	FailOpen, NeverFailOpen []string
}

// WithDefaults answers b with unset fields defaulted: Default, fail-open
// StepStarted, never-fail-open StepCompleted and StepFailed.
func (b Budget) WithDefaults() Budget {
	if b.Limit == 0 {
		b.Limit = Default
	}
	if b.FailOpen == nil {
		b.FailOpen = []string{runstate.EvStepStarted}
	}
	if b.NeverFailOpen == nil {
		b.NeverFailOpen = []string{runstate.EvStepCompleted, runstate.EvStepFailed}
	}
	return b
}

// Validate refuses a budget under 1ms and a class in both lists.
func (b Budget) Validate() error {
	if b.Limit < time.Millisecond {
		return fmt.Errorf("write latency budget must be at least 1ms, got %s", b.Limit)
	}
	for _, cls := range b.FailOpen {
		if slices.Contains(b.NeverFailOpen, cls) {
			return fmt.Errorf("event class %s cannot both fail open and never fail open", cls)
		}
	}
	return nil
}

// Class is what the budget does to one decision's commit.
type Class int

const (
	// Observed: no event of the decision is classified; a slow commit is
	// waited for and logged.
	Observed Class = iota
	// FailOpen: the decision appends a fail-open class and no
	// never-fail-open one; a slow commit is waited for and logged.
	FailOpen
	// Enforced: the decision appends a never-fail-open class; its commit is
	// abandoned at the budget.
	Enforced
)

func (k Class) String() string {
	return [...]string{"observed", "fail_open", "enforced"}[k]
}

// ClassOf classifies a decision by the events it appends, answering the
// event type that decided it; a never-fail-open event wins over a
// fail-open one in the same batch.
func (b Budget) ClassOf(events []runstate.Event) (Class, string) {
	class, which := Observed, ""
	for _, ev := range events {
		switch {
		case slices.Contains(b.NeverFailOpen, ev.Type):
			return Enforced, ev.Type
		case class == Observed && slices.Contains(b.FailOpen, ev.Type):
			class, which = FailOpen, ev.Type
		}
	}
	return class, which
}

// Outcome is what one decision's commit under the budget did.
type Outcome struct {
	Class     Class
	EventType string // the event type that classed the decision
	Elapsed   time.Duration
	// Abandoned: the budget ended an Enforced commit, which failed; the
	// decision was not applied, or its outcome is unknown.
	Abandoned bool
}

// Exceeded reports whether the commit ran over the budget: abandoned, or
// done and slower than it.
func (o Outcome) Exceeded(b Budget, err error) bool {
	return o.Abandoned || (err == nil && o.Elapsed > b.Limit)
}

// Commit runs a decision's commit under the budget
// (docs/semantics.md#write-latency-budget): an Enforced decision commits
// under a context that ends at the budget; any other is waited for. It
// answers what happened and the commit's own error.
func (b Budget) Commit(ctx context.Context, events []runstate.Event, now func() time.Time, commit func(context.Context) error) (Outcome, error) {
	var out Outcome
	out.Class, out.EventType = b.ClassOf(events)
	start := now()
	cctx := ctx
	if out.Class == Enforced {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, b.Limit)
		defer cancel()
	}
	err := commit(cctx)
	out.Abandoned = out.Class == Enforced && err != nil && cctx.Err() != nil && ctx.Err() == nil
	out.Elapsed = now().Sub(start)
	return out, err
}
