package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Sub-workflows (docs/semantics.md#sub-workflows). Every hand-over between a
// parent run and its child is a durable timer written in the batch of the
// decision that asks for it, and applied once by the decision that deletes
// it, so that no crash loses or repeats one:
//
//   - child-start (on the parent, ref the step): written when the step is
//     dispatched; firing submits the child under the run request id
//     decide.ChildRequestID (a second submission answers the first child)
//     and records it on the step.
//   - child-end (on the parent, ref the child): written in the batch that
//     ends the child; firing reads the child's end and finishes the step.
//   - parent (on the child, ref the parent and the parent's event
//     sequence): written when the parent stops waiting for a running child,
//     pauses or resumes; firing reads the parent and brings the child in
//     line: cancelled (parentClose cancel), paused or resumed.
//
// Timers fire within PollInterval (the timer loop), on whichever engine
// holds the run.

// TriggerWorkflow is the trigger source of a child run.
const TriggerWorkflow = "workflow"

// DefaultMaxWorkflowDepth is how deeply runs may nest (Config.MaxWorkflowDepth).
const DefaultMaxWorkflowDepth = 8

// fireSubWorkflowTimer applies a sub-workflow timer (fireTimer).
func fireSubWorkflowTimer(ctx context.Context, e *Engine, key []byte, t *record.Timer) error {
	var err error
	switch t.Kind {
	case record.TimerChildStart:
		err = fireChildStart(ctx, e, key, t)
	case record.TimerChildEnd:
		err = fireChildEnd(ctx, e, key, t)
	default:
		err = fireParentSync(ctx, e, key, t)
	}
	var cf *store.ConditionFailedError
	switch {
	case CodeOf(err) == CodeNotFound:
		return dropIfRunGone(ctx, e, t.RunID, key)
	case errors.As(err, &cf):
		return nil // fired elsewhere: look again next tick
	}
	return err
}

// loadForChild reads a run's record and its checkpoint from the store.
func loadForChild(ctx context.Context, e *Engine, runID string) (*record.Run, *runstate.State, error) {
	run, err := e.records.LoadRun(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	state, _, _, err := e.records.CheckpointToDecideOn(ctx, runID, true)
	return run, state, err
}

// consumeTimer is a decision on the timer's run that only deletes the
// timer (on condition that it is still there), and writes sync, when set,
// a parent timer for that child.
func consumeTimer(ch *change, key []byte) {
	ch.require(store.IfPresent(key))
	ch.del(key)
}

// syncChild writes a parent timer for the child run: it brings the child in
// line with the parent, which this decision changes.
func syncChild(ch *change, childRunID string) {
	ch.setTimer(record.Timer{RunID: childRunID, Kind: record.TimerParent, Due: ch.now,
		Ref: ch.run.RunID + "@" + strconv.FormatUint(ch.state.LastSeq, 10)})
}

// fireChildStart starts the child run of a step that waits for one, and
// records it on the step; a step that no longer waits has the child its
// earlier firing may have started (before a crash) brought in line.
func fireChildStart(ctx context.Context, e *Engine, key []byte, t *record.Timer) error {
	parent, state, err := loadForChild(ctx, e, t.RunID)
	if err != nil {
		return err
	}
	a, st := parent.Action(t.Ref), state.Step(t.Ref)
	if a == nil || a.Workflow == nil || st == nil {
		return drive(ctx, e, t.RunID, func(ch *change) error { consumeTimer(ch, key); return nil })
	}
	logical := st.LogicalAttempt
	if !decide.ChildWanted(state, a.ID, logical) {
		orphan, err := existingChild(ctx, e, parent, a, logical)
		if err != nil {
			return err
		}
		return drive(ctx, e, t.RunID, func(ch *change) error {
			consumeTimer(ch, key)
			if orphan != "" && orphan != ch.state.Step(a.ID).ChildRunID {
				syncChild(ch, orphan)
			}
			return nil
		})
	}
	childID, refusal, err := startChild(ctx, e, parent, a, logical, decide.ChildInput(a, st))
	if err != nil {
		return err
	}
	return drive(ctx, e, t.RunID, func(ch *change) error {
		consumeTimer(ch, key)
		if refusal != nil {
			return ch.rules().ChildRefused(a.ID, logical, refusal)
		}
		waits, err := ch.rules().ChildStarted(a.ID, logical, childID)
		if err == nil && !waits {
			syncChild(ch, childID) // the parent stopped waiting meanwhile
		}
		return err
	})
}

// childRequest answers the submission of the step's child run for its
// logical attempt.
func childRequest(parent *record.Run, a *definition.Action, logical int, input json.RawMessage) SubmitParams {
	return SubmitParams{TenantID: parent.TenantID, ProjectID: parent.ProjectID, EnvironmentID: parent.EnvironmentID,
		RunRequestID: decide.ChildRequestID(parent.RunID, a.ID, logical), Start: true, Input: input,
		SubmittedBy: parent.SubmittedBy, TriggerSource: TriggerWorkflow, traceParent: parent.TraceParent,
		parent: &record.Parent{RunID: parent.RunID, Step: a.ID, Logical: logical, Depth: parent.Depth() + 1}}
}

// childDefinition answers the definition the step's child runs: inline,
// or the stored version its parent's submission pinned.
func childDefinition(ctx context.Context, e *Engine, tenant string, w *definition.SubWorkflow) (definition.Definition, error) {
	if w.Definition != nil {
		return *w.Definition, nil
	}
	stored, err := getDefinition(ctx, e, tenant, DefinitionRef{PlanID: w.PlanID, Version: w.PlanVersion})
	if err != nil {
		return definition.Definition{}, err
	}
	return stored.Definition, nil
}

// startChild submits the step's child run, idempotently: the same logical
// attempt answers the same child. It answers the child's id, or the error
// the step fails with when the child cannot be started (the depth cap, a
// refused submission); any other error is answered as err, and the timer
// fires again.
func startChild(ctx context.Context, e *Engine, parent *record.Run, a *definition.Action, logical int, input json.RawMessage) (string, *runstate.StepError, error) {
	if depth := parent.Depth() + 1; depth > e.cfg.MaxWorkflowDepth {
		return "", &runstate.StepError{Class: definition.ErrorValidation, Code: "workflow_depth", Message: fmt.Sprintf(
			"step %s would start a child run at depth %d, past the sub-workflow depth cap of %d (weftd --max-workflow-depth)",
			a.ID, depth, e.cfg.MaxWorkflowDepth)}, nil
	}
	p := childRequest(parent, a, logical, input)
	def, err := childDefinition(ctx, e, parent.TenantID, a.Workflow)
	if err == nil {
		p.Definition = def
		p.Priority = childPriority(parent, &def)
		var res *SubmitResult
		if res, err = submit(ctx, e, p); err == nil {
			return res.Run.RunID, nil, nil
		}
	}
	switch CodeOf(err) {
	case CodeInvalidArgument, CodeNotFound, CodeFailedPrecondition, CodeResourceExhausted, CodeOperationConflict:
		return "", &runstate.StepError{Class: definition.ErrorValidation, Code: "child_run_refused",
			Message: "the child run of step " + a.ID + " was refused: " + faultMessage(err)}, nil
	}
	return "", nil, err
}

// faultMessage answers an engine error's message without its code.
func faultMessage(err error) string {
	var f *Error
	if errors.As(err, &f) {
		return f.Message
	}
	return err.Error()
}

// existingChild answers the child run the step's logical attempt started,
// or "" when there is none.
func existingChild(ctx context.Context, e *Engine, parent *record.Run, a *definition.Action, logical int) (string, error) {
	def, err := childDefinition(ctx, e, parent.TenantID, a.Workflow)
	if CodeOf(err) == CodeNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	key := record.RunRequestKey(parent.TenantID, parent.ProjectID, parent.EnvironmentID, def.PlanID, def.PlanVersion,
		decide.ChildRequestID(parent.RunID, a.ID, logical))
	value, found, err := getValue(ctx, e.store, key)
	if err != nil || !found {
		return "", err
	}
	return string(value), nil
}

// childEndToken is a child-end timer's token: the parent's step and its
// logical attempt, so that a child removed meanwhile still names them.
func childEndToken(p *record.Parent) string { return strconv.Itoa(p.Logical) + ":" + p.Step }

// parseChildEndToken reads childEndToken.
func parseChildEndToken(token string) (step string, logical int, ok bool) {
	n, step, found := strings.Cut(token, ":")
	logical, err := strconv.Atoi(n)
	return step, logical, found && err == nil
}

// fireChildEnd finishes the parent's step with its child's end, once.
func fireChildEnd(ctx context.Context, e *Engine, key []byte, t *record.Timer) error {
	step, logical, ok := parseChildEndToken(t.Token)
	if !ok {
		e.log.Error("undecodable child-end timer deleted")
		return deleteOrphan(ctx, e, key)
	}
	end := decide.ChildEnd{ActionID: step, Logical: logical, ChildRunID: t.Ref}
	child, state, err := loadForChild(ctx, e, t.Ref)
	switch {
	case CodeOf(err) == CodeNotFound:
		end.Gone = true
	case err != nil:
		return err
	case !state.Status.Terminal():
		end.Status = "" // rerun since: its next end writes another timer
	default:
		end.Status, end.Err, end.Result = state.Status, state.Error, snapshotOf(child, state).Result
	}
	return drive(ctx, e, t.RunID, func(ch *change) error {
		consumeTimer(ch, key)
		if end.Status == "" && !end.Gone {
			return nil
		}
		return ch.rules().ChildEnded(end)
	})
}

// fireParentSync brings a child run in line with its parent: cancelled when
// the parent no longer waits for it and the step's parentClose is cancel,
// paused while the parent is paused, resumed when it is not.
func fireParentSync(ctx context.Context, e *Engine, key []byte, t *record.Timer) error {
	child, err := e.records.LoadRun(ctx, t.RunID)
	if err != nil {
		return err
	}
	p := child.Parent
	if p == nil {
		return drive(ctx, e, t.RunID, func(ch *change) error { consumeTimer(ch, key); return nil })
	}
	want := childWanted{reason: "parent run " + p.RunID}
	parent, pstate, err := loadForChild(ctx, e, p.RunID)
	switch {
	case CodeOf(err) == CodeNotFound:
		want.closed, want.cancel = true, true
	case err != nil:
		return err
	default:
		want.closed = !waitsFor(pstate, p, child.RunID)
		want.cancel = parent.Action(p.Step) == nil || parent.Action(p.Step).ParentClose != definition.ParentCloseAbandon
		want.paused = pstate.Status == runstate.RunPaused
	}
	return drive(ctx, e, t.RunID, func(ch *change) error {
		consumeTimer(ch, key)
		return want.apply(ch, e)
	})
}

// waitsFor reports whether the parent's step still waits for the child.
func waitsFor(parent *runstate.State, p *record.Parent, childRunID string) bool {
	if parent.Status.Terminal() {
		return false
	}
	st := parent.Step(p.Step)
	if st == nil || st.LogicalAttempt != p.Logical {
		return false
	}
	return (st.Status == runstate.StepRunning && st.ChildRunID == childRunID) || decide.ChildWanted(parent, p.Step, p.Logical)
}

// childWanted is what a child run should be, given its parent.
type childWanted struct {
	closed bool // the parent no longer waits for it
	cancel bool // and its parentClose is cancel
	paused bool // the parent is paused
	reason string
}

// apply brings the child (ch's run) in line.
func (w childWanted) apply(ch *change, e *Engine) error {
	s := ch.state.Status
	c := decide.Control{Actor: "system", Reason: w.reason}
	switch {
	case w.closed && w.cancel && !s.Terminal() && s != runstate.RunCompensating:
		c.Reason += " no longer waits for it (parentClose cancel)"
		return ch.rules().Cancel(c)
	case w.closed:
		return nil
	case w.paused && (s == runstate.RunRunning || s == runstate.RunBlocked):
		c.Reason += " is paused"
		return ch.rules().Pause(c, e.cfg.DrainTimeout)
	case !w.paused && s == runstate.RunPaused:
		c.Reason += " resumed"
		return ch.rules().Resume(c)
	}
	return nil
}

// notifyParent writes, in the batch that ends a child run, the child-end
// timer that finishes its parent's step.
func notifyParent(ch *change, from runstate.RunStatus) {
	p := ch.run.Parent
	if p == nil || from.Terminal() || !ch.state.Status.Terminal() {
		return
	}
	ch.setTimer(record.Timer{RunID: p.RunID, Kind: record.TimerChildEnd, Ref: ch.run.RunID, Due: ch.now, Token: childEndToken(p)})
}

// childSteps is what a decision's sub-workflow steps were before it
// decided: each one's status and child.
type childSteps struct {
	status []runstate.StepStatus
	child  []string
}

// childStepsOf answers the sub-workflow steps of the run before a decision;
// nil when its definition has none.
func childStepsOf(ch *change) *childSteps {
	if !hasChildSteps(&ch.run.Definition) {
		return nil
	}
	cs := &childSteps{status: make([]runstate.StepStatus, len(ch.state.Steps)), child: make([]string, len(ch.state.Steps))}
	for i, st := range ch.state.Steps {
		cs.status[i], cs.child[i] = st.Status, st.ChildRunID
	}
	return cs
}

// hasChildSteps reports whether a definition has a sub-workflow step.
func hasChildSteps(d *definition.Definition) bool {
	for i := range d.Actions {
		if d.Actions[i].Workflow != nil {
			return true
		}
	}
	return false
}

// syncChildren writes a parent timer for every running child this decision
// concerns: its step stopped waiting for it (cancelled), the run paused or
// resumed (or the child started while the run is paused), or the run ended.
func syncChildren(ch *change, from runstate.RunStatus, before *childSteps) {
	if before == nil || len(before.status) != len(ch.state.Steps) {
		return
	}
	to := ch.state.Status
	pauseMoved := (from == runstate.RunPaused) != (to == runstate.RunPaused)
	for i, st := range ch.state.Steps {
		wasRunning := before.status[i] == runstate.StepRunning && before.child[i] != ""
		running := st.Status == runstate.StepRunning && st.ChildRunID != ""
		switch {
		case wasRunning && !running && st.Status != runstate.StepSucceeded && st.Status != runstate.StepFailed:
			syncChild(ch, before.child[i]) // the step stopped waiting (its child's end finishes it otherwise)
		case running && (pauseMoved || to.Terminal() || (!wasRunning && to == runstate.RunPaused)):
			syncChild(ch, st.ChildRunID)
		}
	}
}

// resolveSubWorkflows reads, at submission, every stored definition a
// sub-workflow step names, pinning the version (the latest when none is
// given); a missing one is refused, named by its field path.
func resolveSubWorkflows(ctx context.Context, e *Engine, p *SubmitParams) error {
	if !needsResolving(&p.Definition) {
		return nil
	}
	d := p.Definition.Clone()
	if err := resolveIn(ctx, e, p.TenantID, &d, "definition"); err != nil {
		return err
	}
	p.Definition = d
	return nil
}

// needsResolving reports whether a definition, or an inline one in it,
// names a stored definition.
func needsResolving(d *definition.Definition) bool {
	for i := range d.Actions {
		if w := d.Actions[i].Workflow; w != nil && (w.PlanID != "" || (w.Definition != nil && needsResolving(w.Definition))) {
			return true
		}
	}
	return false
}

// resolveIn pins the plan references of d (a private copy), whose field
// path is path.
func resolveIn(ctx context.Context, e *Engine, tenant string, d *definition.Definition, path string) error {
	for i := range d.Actions {
		w := d.Actions[i].Workflow
		if w == nil {
			continue
		}
		wp := fmt.Sprintf("%s.actions[%d].workflow", path, i)
		if w.Definition != nil {
			if err := resolveIn(ctx, e, tenant, w.Definition, wp+".definition"); err != nil {
				return err
			}
			continue
		}
		if w.PlanID == "" {
			continue // Validate refuses it
		}
		ref := DefinitionRef{PlanID: w.PlanID, Version: w.PlanVersion}
		stored, err := getDefinition(ctx, e, tenant, ref)
		switch {
		case CodeOf(err) == CodeNotFound:
			field, rule := wp+".plan_id", "workflow.plan_exists"
			if w.PlanVersion != "" {
				field, rule = wp+".plan_version", "workflow.version_exists"
			}
			return fault.Invalid(fault.Violation(field, rule, "the sub-workflow names %s, which the definition registry does not hold", ref))
		case err != nil:
			return err
		}
		w.PlanVersion = stored.Definition.PlanVersion
	}
	return nil
}

// deleteChildren removes, before DeleteRun removes their finished parent,
// every child run its sub-workflow steps started, at every logical attempt
// (docs/semantics.md#sub-workflows): refused with failed_precondition, and
// nothing removed, while the parent or any child has not finished. A retry
// after a crash between the removals finds the removed ones gone.
func deleteChildren(ctx context.Context, e *Engine, parent *record.Run, p DeleteRunParams) error {
	if !hasChildSteps(&parent.Definition) {
		return nil
	}
	state, _, _, err := e.records.CheckpointToDecideOn(ctx, parent.RunID, true)
	if err != nil || !state.Status.Terminal() {
		return err // the parent's own decision refuses a run that has not finished
	}
	var children []string
	for _, st := range state.Steps {
		a := parent.Definition.Action(st.ActionID) // a fan-out's item too: one child per item (docs/semantics.md#for-each)
		if a == nil || a.Workflow == nil || a.ForEach != "" {
			continue
		}
		for logical := 1; logical <= st.LogicalAttempt; logical++ {
			id, err := existingChild(ctx, e, parent, a, logical)
			if err != nil {
				return err
			}
			if id == "" {
				continue
			}
			cs, _, _, err := e.records.CheckpointToDecideOn(ctx, id, true)
			switch {
			case CodeOf(err) == CodeNotFound:
				continue
			case err != nil:
				return err
			case !cs.Status.Terminal():
				return fault.FailedPrecondition(parent.RunID, "run "+parent.RunID+" has child run "+id+" (step "+a.ID+
					") that is "+string(cs.Status)+": a run is deleted with its children once they have all finished")
			}
			children = append(children, id)
		}
	}
	for _, id := range children {
		_, err := e.DeleteRun(ctx, DeleteRunParams{TenantID: p.TenantID, RunID: id, Actor: p.Actor})
		if err != nil && CodeOf(err) != CodeNotFound {
			return err
		}
	}
	return nil
}
