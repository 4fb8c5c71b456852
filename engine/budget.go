package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// DefaultWriteLatencyBudget is the budget of docs/semantics.md#write-latency-budget.
const DefaultWriteLatencyBudget = 3 * time.Second

// budgetClass is what the write latency budget does to one decision's commit.
type budgetClass int

const (
	// budgetObserved: no event of the decision is classified; a slow commit
	// is waited for and logged.
	budgetObserved budgetClass = iota
	// budgetFailOpen: the decision appends a fail-open class (StepStarted)
	// and no never-fail-open one; a slow commit is waited for and logged.
	budgetFailOpen
	// budgetEnforced: the decision appends a never-fail-open class
	// (StepCompleted, StepFailed); its commit is abandoned at the budget.
	budgetEnforced
)

func (k budgetClass) String() string {
	return [...]string{"observed", "fail_open", "enforced"}[k]
}

// budgetDefaults fills the defaults of docs/semantics.md#write-latency-budget.
func (c Config) budgetDefaults() Config {
	if c.WriteLatencyBudget == 0 {
		c.WriteLatencyBudget = DefaultWriteLatencyBudget
	}
	if c.FailOpenEventClasses == nil {
		c.FailOpenEventClasses = []string{runstate.EvStepStarted}
	}
	if c.NeverFailOpenEventClasses == nil {
		c.NeverFailOpenEventClasses = []string{runstate.EvStepCompleted, runstate.EvStepFailed}
	}
	return c
}

// validateBudget refuses a budget under 1ms and a class in both lists.
func (c Config) validateBudget() error {
	if c.WriteLatencyBudget < time.Millisecond {
		return fmt.Errorf("write latency budget must be at least 1ms, got %s", c.WriteLatencyBudget)
	}
	for _, cls := range c.FailOpenEventClasses {
		if slices.Contains(c.NeverFailOpenEventClasses, cls) {
			return fmt.Errorf("event class %s cannot both fail open and never fail open", cls)
		}
	}
	return nil
}

// budgetClassOf classifies a decision by the events it appends; a
// never-fail-open event wins over a fail-open one in the same batch.
func (c Config) budgetClassOf(events []runstate.Event) (budgetClass, string) {
	class, which := budgetObserved, ""
	for _, ev := range events {
		switch {
		case slices.Contains(c.NeverFailOpenEventClasses, ev.Type):
			return budgetEnforced, ev.Type
		case class == budgetObserved && slices.Contains(c.FailOpenEventClasses, ev.Type):
			class, which = budgetFailOpen, ev.Type
		}
	}
	return class, which
}

// commitWithinBudget commits a decision's batch under the write latency
// budget (docs/semantics.md#write-latency-budget). An enforced decision commits under a context that
// ends at the budget; if the budget ends the commit, the decision fails with
// CodeUnavailable and the caller retries it whole: either nothing was
// written, or (outcome unknown) it was written and the retry finds it
// applied. Other decisions are never failed by the budget; a commit slower
// than it is logged.
func (e *Engine) commitWithinBudget(ctx context.Context, ch *change, b *store.Batch) (*store.CommitResult, error) {
	class, eventType := e.cfg.budgetClassOf(ch.events)
	start := e.clock.Now()
	cctx := ctx
	if class == budgetEnforced {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, e.cfg.WriteLatencyBudget)
		defer cancel()
	}
	res, err := e.commit(cctx, b)
	if class == budgetEnforced && err != nil && cctx.Err() != nil && ctx.Err() == nil {
		e.log.Warn("write latency budget exceeded", slog.String("event", "WRITE_LATENCY_BUDGET_EXCEEDED"),
			slog.String("run_id", ch.run.RunID), slog.String("event_type", eventType),
			slog.String("budget_class", class.String()), slog.Duration("budget", e.cfg.WriteLatencyBudget))
		return nil, errUnavailable(ch.run.RunID, fmt.Sprintf(
			"write latency budget of %s exceeded recording %s for run %s; the report was not applied or its outcome is unknown: retry it unchanged (same token)",
			e.cfg.WriteLatencyBudget, eventType, ch.run.RunID))
	}
	if elapsed := e.clock.Now().Sub(start); err == nil && elapsed > e.cfg.WriteLatencyBudget {
		e.log.Warn("write latency budget exceeded", slog.String("event", "WRITE_LATENCY_BUDGET_EXCEEDED"),
			slog.String("run_id", ch.run.RunID), slog.String("event_type", eventType),
			slog.String("budget_class", class.String()), slog.Duration("budget", e.cfg.WriteLatencyBudget),
			slog.Duration("elapsed", elapsed))
	}
	return res, err
}
