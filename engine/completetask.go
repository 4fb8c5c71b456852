package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// ReportResult answers a task report.
type ReportResult struct {
	// Duplicate is true when this claim was already reported the same way;
	// nothing changed.
	Duplicate bool
	// WillRetry is true when a failure is followed by another attempt.
	WillRetry bool
	// Tasks were claimed for the reporting worker by eager dispatch
	// (ReportParams.Next).
	Tasks []*Task
}

// CompleteTask records a task's result durably before it answers. With
// r.Next, the tasks the result makes ready that r.Next asks for are claimed
// for the worker in the result's own commit (eager dispatch, dispatch.go) and
// answered with it.
func (e *Engine) CompleteTask(ctx context.Context, r ReportParams) (*ReportResult, error) {
	return reportComplete(ctx, e, r)
}

// reportComplete takes a worker's result: CompleteTask.
func reportComplete(ctx context.Context, e *Engine, r ReportParams) (*ReportResult, error) {
	if err := checkOutput(r.Output, e.cfg.InlineResultLimit); err != nil {
		return nil, err
	}
	if err := checkNext(r); err != nil {
		return nil, err
	}
	types, err := reportedAttributeTypes(ctx, e, r)
	if err != nil {
		return nil, err
	}
	eager := eagerSlot(ctx, e, r.Next)
	res, err := report(ctx, e, r, "completed", func(ch *change, t *record.Task, a *definition.Action, st *runstate.StepState) error {
		ch.eager, ch.completed = eager, t
		switch t.Kind {
		case TaskCompensation:
			return ch.rules().FinishCompensation(a, st, true, nil)
		case TaskVerify:
			return fault.ClaimLost(t.TaskID, t.RunID) // a verify task is answered with ReportVerification
		}
		if st.Reconcile {
			ch.rules().RecordRecon(a, st, decide.Recon{Status: decide.ReconCompleted, Result: r.Output, Key: r.ReconciliationKey})
		}
		attrs, err := checkAttributes("search_attributes", r.SearchAttributes, ch.state.SearchAttributes, types)
		if err != nil {
			return err
		}
		logical := st.LogicalAttempt
		if err := ch.rules().SucceedAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptSucceeded, Output: r.Output,
			Artifacts: r.Artifacts, WorkerID: r.WorkerID, CorrelationID: r.CorrelationID}); err != nil {
			return err
		}
		attrs.apply(ch, a.ID, logical)
		return nil
	})
	if lostTypeRace(err) {
		err = fault.Unavailable("", "another result fixed the type of a search attribute first; retry the report")
	}
	res, err = answerEager(e, eager, res, err)
	if res != nil && len(res.Tasks) > 0 {
		noteHanded(e, r.Next.withDefaults(), res.Tasks)
	}
	return res, err
}

// recordEagerClaims records the tokens of the next tasks eager dispatch
// claimed for the worker in the decision of its completion, so that a
// retried completion, which proves the worker never got the answer that
// named them, gives them back (giveBackEager): in the completed step's
// checkpoint state (runstate.StepState.EagerTokens), or in the completed
// task's record when the decision writes it (finishTask).
func recordEagerClaims(c *change) {
	t := c.completed
	if t == nil || c.eager == nil {
		return
	}
	var tokens []string
	for _, h := range c.eff.HandOffs {
		if h.Slot == c.eager && h.Task != nil {
			tokens = append(tokens, h.Task.Token)
		}
	}
	if len(tokens) == 0 {
		return
	}
	if key := record.TaskKey(t.TaskID); writesKey(c, key) {
		t.EagerTokens = append(t.EagerTokens, tokens...)
		rewriteTask(c, key, t)
		return
	}
	if st := c.state.Step(t.ActionID); st != nil {
		for i, tok := range tokens {
			tokens[i] = shortToken(c.run.RunID, tok)
		}
		st.EagerTokens = tokens
		c.dirty = true
	}
}

// shortToken answers a claim token of a task of run runID as the
// checkpoint keeps it (runstate.StepState.EagerTokens): without the run's
// id and the "/" its task id begins with, which the checkpoint names
// already; fullToken puts them back.
func shortToken(runID, token string) string {
	if rest, ok := strings.CutPrefix(token, runID+"/"); ok {
		return rest
	}
	return token
}

// fullToken answers a token shortToken shortened.
func fullToken(runID, short string) string { return runID + "/" + short }

// eagerTokensOf answers the tokens of the tasks eager dispatch claimed with
// the completion of t's attempt, which ended without writing t's record:
// those its step holds while that attempt is the step's last.
func eagerTokensOf(s *runstate.State, t *record.Task) []string {
	st := s.Step(t.ActionID)
	if st == nil || len(st.Attempts) == 0 {
		return nil
	}
	if a := st.Attempts[len(st.Attempts)-1]; a.LogicalAttempt != t.LogicalAttempt || a.EngineAttempt != t.EngineAttempt {
		return nil
	}
	tokens := make([]string, len(st.EagerTokens))
	for i, short := range st.EagerTokens {
		tokens[i] = fullToken(t.RunID, short)
	}
	return tokens
}

// dropEagerToken forgets, as the claim t records ends, what eager dispatch
// recorded of it: its token, held by the step whose completion claimed it
// (t.EagerOf) for a retried completion to give back, and the tokens its own
// step held of its last completion, now that another attempt of the step
// ends.
func dropEagerToken(c *change, t *record.Task) {
	if st := c.state.Step(t.ActionID); st != nil && st.EagerTokens != nil {
		st.EagerTokens = nil
		c.dirty = true
	}
	if t.EagerOf == "" {
		return
	}
	st, short := c.state.Step(t.EagerOf), shortToken(c.run.RunID, t.Token)
	if st == nil || !slices.Contains(st.EagerTokens, short) {
		return
	}
	kept := make([]string, 0, len(st.EagerTokens)-1) // a new slice: the cached checkpoint's may share the old
	for _, tok := range st.EagerTokens {
		if tok != short {
			kept = append(kept, tok)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	st.EagerTokens = kept
	c.dirty = true
}

// rewriteTask replaces the value of the put of task record t at key that
// the decision already holds (put), as t is now.
func rewriteTask(c *change, key []byte, t *record.Task) {
	b := runcodec.AppendTask(make([]byte, 0, taskRecordSize), t.Stored())
	for i := range c.ops {
		if c.ops[i].Kind == store.OpPut && string(c.ops[i].Key) == string(key) {
			c.ops[i].Value = b
		}
	}
	for i := range c.taskPuts {
		if string(c.taskPuts[i].Key) == string(key) {
			c.taskPuts[i].Record, c.taskPuts[i].Body = *t, b
		}
	}
}

// giveBackEager gives back the next tasks eager dispatch claimed with a
// completion that is now reported again with the same token: the worker
// retries a completion only when it did not get the answer, so it never
// learnt of them, and they would stay claimed by nobody until their attempt
// timeouts. Each still claimed with its token is ready again
// (docs/semantics.md#give-back); one reported, timed out or given back
// meanwhile is left as it is.
func giveBackEager(e *Engine, tokens []string) {
	tasks := make([]*Task, 0, len(tokens))
	for _, tok := range tokens {
		if id, err := parseToken(tok); err == nil {
			tasks = append(tasks, &Task{TaskID: id, Token: tok})
		}
	}
	giveBack(e, tasks)
}

// checkNext refuses a request for next tasks that is not the reporting
// worker's, or that would wait.
func checkNext(r ReportParams) error {
	switch {
	case r.Next == nil:
		return nil
	case r.Next.WorkerID != r.WorkerID:
		return fault.Invalid(fault.Violation("next_tasks.worker_id", "next_tasks.worker", "next_tasks.worker_id must equal worker_id"))
	case r.Next.Wait != 0:
		return fault.Invalid(fault.Violation("next_tasks.wait_ms", "next_tasks.no_wait", "next_tasks.wait_ms must be 0: a completion never waits for tasks"))
	}
	return nil
}

// eagerSlot answers the hand-off slot for a reporting worker's next tasks;
// nil when it asked for none.
func eagerSlot(ctx context.Context, e *Engine, next *PollParams) *dispatch.Slot[*Task] {
	if next == nil {
		return nil
	}
	return slotFor(ctx, e, next.withDefaults())
}

// answerEager adds to a report's answer the tasks eager dispatch claimed for
// the worker. A claim is only ever made by a decision that committed, and a
// committed claim is answered, whatever else the report met — unless the
// call has ended, when they are given back.
func answerEager(e *Engine, s *dispatch.Slot[*Task], res *ReportResult, err error) (*ReportResult, error) {
	if s == nil {
		return res, err
	}
	tasks := e.dispatch.Close(s)
	if len(tasks) == 0 {
		return res, err
	}
	if s.Context().Err() != nil {
		return nil, e.dispatch.Undelivered(s, tasks) // dispatch.go; the result itself is recorded
	}
	if err != nil {
		e.log.Warn("a report failed after its eager claims committed; answering the tasks claimed", slog.String("error", err.Error()))
	}
	if res == nil {
		res = &ReportResult{}
	}
	res.Tasks = tasks
	return res, nil
}

// checkOutput enforces the inline result limit (docs/semantics.md#artifacts-and-secrets).
func checkOutput(out json.RawMessage, limit int) error {
	return checkJSON(out, "output", limit, "send it as an artifact reference")
}
