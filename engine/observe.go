package engine

import (
	"context"
	"time"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Observer is told what the engine does, for traces and metrics
// (docs/observability.md): a submission, each decision with its store
// commit, each claim (the task's wait in its queue) and each attempt's end.
// It is handed identifiers, names, times and outcomes — never an input,
// output or error message. Config.Observer nil: the engine calls nothing
// and pays nothing.
type Observer interface {
	// SubmitStarting is called as a submission begins. It answers the
	// context the submission continues under and the W3C traceparent kept
	// with the run, to which every later observation of the run belongs
	// ("": none).
	SubmitStarting(ctx context.Context, planID string) (context.Context, string)
	// SubmitEnded is called with the context SubmitStarting answered once
	// the submission is answered.
	SubmitEnded(ctx context.Context, runID string, existing bool, err error)
	// DecisionStarting is called as one attempt at a decision about run
	// begins; it answers the context the decision is made under.
	DecisionStarting(ctx context.Context, run ObservedRun, actor string) context.Context
	// StoreCommitted is called, with the decision's context, once the
	// store's commit of the decision's batch, begun at start, returned.
	StoreCommitted(ctx context.Context, start time.Time, ops int, err error)
	// TaskClaimed is called when the decision claims a task; it answers the
	// traceparent handed to the worker with the task ("": none).
	TaskClaimed(ctx context.Context, run ObservedRun, task ObservedTask) string
	// DecisionEnded is called when the attempt at the decision is over,
	// committed or not.
	DecisionEnded(ctx context.Context, d ObservedDecision)
}

// ObservedRun names the run a decision is about.
type ObservedRun struct {
	RunID, TenantID, PlanID, PlanVersion string
	// TraceParent is the W3C traceparent kept with the run ("": none).
	TraceParent string
	CreatedAt   time.Time
}

// ObservedTask is a task claimed, or an attempt ended, by a decision.
type ObservedTask struct {
	TaskID, ActionID, Queue, Activity string
	Kind                              TaskKind
	// Token is the claim's token: it names the attempt's span.
	Token                         string
	LogicalAttempt, EngineAttempt int
	// ReadyAt is when the task could first be claimed; ClaimedAt when it
	// was; EndedAt when its attempt ended (zero for a claim).
	ReadyAt, ClaimedAt, EndedAt time.Time
	// Outcome is how the attempt ended: completed, failed or timed_out
	// ("" for a claim).
	Outcome string
}

// ObservedDecision is an attempt at a decision, as DecisionEnded sees it.
type ObservedDecision struct {
	Run ObservedRun
	// Events are what the decision appended (read only, and only during
	// the call).
	Events []runstate.Event
	// Claimed and Ended are the tasks the decision claimed and the attempts
	// it ended.
	Claimed, Ended []ObservedTask
	Committed      bool
	Err            error
}

// observedRun answers the run as observers see it.
func observedRun(r *record.Run) ObservedRun {
	return ObservedRun{RunID: r.RunID, TenantID: r.TenantID, PlanID: r.Definition.PlanID,
		PlanVersion: r.Definition.PlanVersion, TraceParent: r.TraceParent, CreatedAt: r.CreatedAt}
}

// observedTask answers a task record as observers see it.
func observedTask(t *record.Task, outcome string, now time.Time) ObservedTask {
	o := ObservedTask{TaskID: t.TaskID, ActionID: t.ActionID, Queue: t.Queue, Activity: t.Activity, Kind: t.Kind,
		Token: t.Token, LogicalAttempt: t.LogicalAttempt, EngineAttempt: t.EngineAttempt,
		ReadyAt: t.NotBefore, ClaimedAt: t.ClaimedAt, Outcome: outcome}
	if outcome != "" {
		o.EndedAt = now
	}
	return o
}

// submitObserved starts observing a submission: the context it continues
// under, with p's traceparent set, and the call that ends it.
func submitObserved(ctx context.Context, e *Engine, p *SubmitParams) (context.Context, func(*SubmitResult, error)) {
	ctx, p.traceParent = e.cfg.Observer.SubmitStarting(ctx, p.Definition.PlanID)
	return ctx, func(res *SubmitResult, err error) {
		var runID string
		if res != nil && res.Run != nil {
			runID = res.Run.RunID
		}
		e.cfg.Observer.SubmitEnded(ctx, runID, res != nil && res.Existing, err)
	}
}

// observeDecision starts observing an attempt at a decision.
func observeDecision(c *change) {
	if c.e == nil || c.e.cfg.Observer == nil {
		return
	}
	c.observing = true
	c.ctx = c.e.cfg.Observer.DecisionStarting(c.ctx, observedRun(c.run), c.actor)
}

// observeEnd tells the observer the attempt at the decision is over.
func observeEnd(c *change, committed *bool, err *error) {
	if !c.observing {
		return
	}
	c.e.cfg.Observer.DecisionEnded(c.ctx, ObservedDecision{Run: observedRun(c.run), Events: c.events,
		Claimed: c.claimed, Ended: c.ended, Committed: *committed, Err: *err})
}

// observeClaim notes a claimed task, and answers the traceparent its
// worker continues.
func observeClaim(c *change, t *record.Task) string {
	if !c.observing {
		return ""
	}
	o := observedTask(t, "", c.now)
	c.claimed = append(c.claimed, o)
	return c.e.cfg.Observer.TaskClaimed(c.ctx, observedRun(c.run), o)
}

// observeAttemptEnd notes the end of a claimed task's attempt.
func observeAttemptEnd(c *change, t *record.Task, outcome string) {
	if c.observing {
		c.ended = append(c.ended, observedTask(t, outcome, c.now))
	}
}

// commitObserved commits the decision's batch (commitWithinBudget), timed
// for the observer when there is one.
func commitObserved(ctx context.Context, ch *change, b *store.Batch) (*store.CommitResult, error) {
	if !ch.observing {
		return commitWithinBudget(ctx, ch, b)
	}
	start := time.Now()
	res, err := commitWithinBudget(ctx, ch, b)
	ch.e.cfg.Observer.StoreCommitted(ch.ctx, start, len(b.Ops), err)
	return res, err
}
