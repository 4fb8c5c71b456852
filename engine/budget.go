package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/weft-dev/weft/engine/internal/budget"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/store"
)

// DefaultWriteLatencyBudget is the budget of docs/semantics.md#write-latency-budget.
const DefaultWriteLatencyBudget = budget.Default

// budget answers the write latency budget the config sets (package budget).
func (c Config) latencyBudget() budget.Budget {
	return budget.Budget{Limit: c.WriteLatencyBudget, FailOpen: c.FailOpenEventClasses, NeverFailOpen: c.NeverFailOpenEventClasses}
}

// budgetDefaults fills the defaults of docs/semantics.md#write-latency-budget.
func (c Config) budgetDefaults() Config {
	b := c.latencyBudget().WithDefaults()
	c.WriteLatencyBudget, c.FailOpenEventClasses, c.NeverFailOpenEventClasses = b.Limit, b.FailOpen, b.NeverFailOpen
	return c
}

// commitWithinBudget commits a decision's batch under the write latency
// budget (docs/semantics.md#write-latency-budget). An enforced decision commits under a context that
// ends at the budget; if the budget ends the commit, the decision fails with
// CodeUnavailable and the caller retries it whole: either nothing was
// written, or (outcome unknown) it was written and the retry finds it
// applied. Other decisions are never failed by the budget; a commit slower
// than it is logged.
func commitWithinBudget(ctx context.Context, ch *change, b *store.Batch) (*store.CommitResult, error) {
	e := ch.e
	lb := e.cfg.latencyBudget()
	var res *store.CommitResult
	out, err := lb.Commit(ctx, ch.events, e.clock.Now, func(ctx context.Context) (err error) {
		res, err = commitChecked(ctx, e.store, b)
		return err
	})
	if out.Exceeded(lb, err) {
		e.log.Warn("write latency budget exceeded", slog.String("event", "WRITE_LATENCY_BUDGET_EXCEEDED"),
			slog.String("run_id", ch.run.RunID), slog.String("event_type", out.EventType),
			slog.String("budget_class", out.Class.String()), slog.Duration("budget", lb.Limit),
			slog.Duration("elapsed", out.Elapsed))
	}
	if out.Abandoned {
		return nil, fault.Unavailable(ch.run.RunID, fmt.Sprintf(
			"write latency budget of %s exceeded recording %s for run %s; the report was not applied or its outcome is unknown: retry it unchanged (same token)",
			lb.Limit, out.EventType, ch.run.RunID))
	}
	return res, err
}
