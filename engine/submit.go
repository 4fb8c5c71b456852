package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// SubmitParams is a run submission.
type SubmitParams struct {
	TenantID      string
	ProjectID     string
	EnvironmentID string
	// Definition is validated (after defaults) before anything is written.
	Definition definition.Definition
	// RunRequestID makes submission idempotent on the tuple of docs/semantics.md#run-request-idempotency.
	RunRequestID string
	// Start triggers the run right after it is persisted.
	Start bool
	Input json.RawMessage
	// SubmittedBy is the authenticated principal.
	SubmittedBy string
	// TriggerSource is recorded in the run's context: TriggerAPI (the
	// default), TriggerManual or TriggerSchedule
	// (docs/semantics.md#trigger-source).
	TriggerSource string
}

// The trigger sources a run's context records.
const (
	// TriggerAPI is a run a client submitted.
	TriggerAPI = "api"
	// TriggerManual is a run an operator started by hand (a schedule's trigger).
	TriggerManual = "manual"
	// TriggerSchedule is a run a schedule's fire submitted.
	TriggerSchedule = "schedule"
)

// SubmitResult answers a submission.
type SubmitResult struct {
	Run *runstate.Snapshot
	// Existing is true when RunRequestID matched a run already submitted.
	Existing bool
}

// submissions builds a run's record from a submission, persists it exactly
// once per run request, and triggers the run. SubmitRun and StartRun are its
// entry points.
type submissions struct{ *Engine }

// SubmitRun validates a definition and persists the run PENDING before it
// answers (docs/semantics.md#submission). With Start the run is then triggered; a crash between
// the two commits is finished by recovery (Tick), because the submission
// leaves a pending-trigger marker that only the trigger removes.
func (e *Engine) SubmitRun(ctx context.Context, p SubmitParams) (*SubmitResult, error) {
	return submissions{e}.submit(ctx, p)
}

// submit validates, persists and triggers a run: SubmitRun.
func (e submissions) submit(ctx context.Context, p SubmitParams) (*SubmitResult, error) {
	rec, err := e.newRunRecord(p)
	if err != nil {
		return nil, err
	}
	if p.Start {
		if err := e.checkAdmission(ctx, rec); err != nil {
			return nil, err
		}
	}
	existing, err := e.persistSubmission(ctx, rec, p)
	if err != nil {
		return nil, err
	}
	if existing != "" {
		snap, err := e.GetRun(ctx, GetRunParams{TenantID: p.TenantID, RunID: existing})
		return &SubmitResult{Run: snap, Existing: true}, err
	}
	if p.Start {
		if err := e.trigger(ctx, rec.RunID, p.SubmittedBy); err != nil {
			return nil, err
		}
	}
	snap, err := e.GetRun(ctx, GetRunParams{TenantID: p.TenantID, RunID: rec.RunID})
	return &SubmitResult{Run: snap}, err
}

// newRunRecord validates the submission and builds the run's record.
func (e submissions) newRunRecord(p SubmitParams) (*runRecord, error) {
	def := p.Definition.WithDefaults()
	if err := def.Validate(); err != nil {
		return nil, prefixViolations(err, "definition.")
	}
	if len(p.Input) > 0 && !json.Valid(p.Input) {
		return nil, invalid(violation("input", "input.json", "input must be valid JSON"))
	}
	canonical, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canonical)
	return &runRecord{
		FormatVersion: recordVersion,
		RunID:         newRunID(),
		TenantID:      p.TenantID,
		ProjectID:     orDefault(p.ProjectID),
		EnvironmentID: orDefault(p.EnvironmentID),
		RunRequestID:  p.RunRequestID,
		SubmittedBy:   p.SubmittedBy,
		TriggerSource: p.TriggerSource,
		Definition:    def,
		Input:         p.Input,
		PlanSHA256:    hex.EncodeToString(sum[:]),
		CreatedAt:     e.now(),
	}, nil
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// prefixViolations answers an invalid definition as an invalid-argument
// error, its field paths prefixed.
func prefixViolations(err error, prefix string) error {
	var e *definition.Error
	if !errors.As(err, &e) {
		return err
	}
	violations := make([]FieldViolation, len(e.Violations))
	for i, v := range e.Violations {
		v.Field = prefix + v.Field
		violations[i] = v
	}
	return errInvalidArgument(e.Message, violations...)
}

// persistSubmission writes the run PENDING in one batch. When RunRequestID
// names a run already submitted, it writes nothing and answers that run's id.
func (e submissions) persistSubmission(ctx context.Context, rec *runRecord, p SubmitParams) (string, error) {
	state := &runstate.State{FormatVersion: runstate.CheckpointVersion, RunID: rec.RunID, Status: runstate.RunPending, CreatedAt: rec.CreatedAt}
	for _, a := range rec.Definition.Actions {
		state.Steps = append(state.Steps, &runstate.StepState{ActionID: a.ID, Status: runstate.StepPending, LogicalAttempt: 1})
	}
	var rrKey []byte
	if rec.RunRequestID != "" {
		d := rec.Definition
		rrKey = runRequestKey(rec.TenantID, rec.ProjectID, rec.EnvironmentID, d.PlanID, d.PlanVersion, rec.RunRequestID)
		unlock := e.lockSubmission(rrKey) // single-owner stores without CAS check the key under it
		defer unlock()
	}
	_, err := e.commitDecision(ctx, decision{
		runID: rec.RunID, actor: actorOf(p.SubmittedBy), newRun: rec, initial: state,
		prepare: func(ctx context.Context, fresh bool) (string, bool, error) {
			if !fresh {
				return rec.RunID, false, nil
			}
			done, err := e.submitted(ctx, rec.RunID) // an attempt whose outcome is unknown may have landed
			return rec.RunID, done, err
		},
		decide: func(ch *change) error {
			ch.submit(p, rrKey)
			return nil
		},
		contended: func() error {
			return errUnavailable("", "submission outcome unknown; retry with the same run_request_id")
		},
	})
	switch {
	case err == nil:
		// The run is driven next (the start, the first poll): keep what was
		// just written so that nothing needs reading back.
		e.runs.Put(rec.RunID, rec)
		return "", nil
	case rrKey != nil && conflictOn(err, rrKey):
		return e.existingRun(ctx, rrKey, rec)
	}
	return "", err
}

// submit is the decision a submission makes: the run's record, its indexes
// and its first event, and the run request it answers.
func (c *change) submit(p SubmitParams, rrKey []byte) {
	rec := c.run
	c.emit(runstate.EvRunSubmitted, "", 1, 0, runstate.EventData{
		Status:       string(runstate.RunPending),
		Context:      rec.context(p.SubmittedBy),
		PlanID:       rec.Definition.PlanID,
		PlanSHA256:   rec.PlanSHA256,
		RunRequestID: rec.RunRequestID,
	})
	recBody, _ := json.Marshal(rec)
	c.ops = append(c.ops, store.Put(runKey(rec.RunID), recBody),
		store.Put(runIndexKey(rec.TenantID, rec.CreatedAt, rec.RunID), []byte(rec.RunID)),
		store.Put(runStatusKey(rec.TenantID, runstate.RunPending, rec.RunID), nil))
	if rrKey != nil {
		c.require(store.IfAbsent(rrKey))
		c.ops = append(c.ops, store.Put(rrKey, []byte(rec.RunID)))
	}
	if p.Start {
		c.ops = append(c.ops, store.Put(pendingTriggerKey(rec.RunID), []byte(rec.RunID)))
	}
}

// submitted reports whether the run's checkpoint exists (an ambiguous commit landed).
func (e submissions) submitted(ctx context.Context, runID string) (bool, error) {
	_, err := e.store.Get(ctx, checkpointKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// existingRun answers the run a run_request_id already names; the same id
// with a different definition is a conflict, not a silent replay.
func (e submissions) existingRun(ctx context.Context, rrKey []byte, rec *runRecord) (string, error) {
	item, err := e.store.Get(ctx, rrKey)
	if err != nil {
		return "", err
	}
	prior, err := e.loadRun(ctx, string(item.Value))
	if err != nil {
		return "", err
	}
	if prior.PlanSHA256 != rec.PlanSHA256 {
		return "", errOperationConflict(prior.RunID, "",
			"run_request_id "+rec.RunRequestID+" already names run "+prior.RunID+" with a different definition")
	}
	return prior.RunID, nil
}

func (r *runRecord) context(triggeredBy string) *runstate.RunContext {
	source := r.TriggerSource
	if source == "" {
		source = TriggerAPI // records written before trigger sources were kept
	}
	return &runstate.RunContext{TenantID: r.TenantID, ProjectID: r.ProjectID, EnvironmentID: r.EnvironmentID,
		TriggeredBy: actorOf(triggeredBy), TriggerSource: source}
}

// actorOf names a principal in emitted_by, or "system".
func actorOf(principal string) string {
	if principal == "" {
		return "system"
	}
	return principal
}

// StartParams names the run StartRun triggers and who asks.
type StartParams struct {
	TenantID string
	RunID    string
	// Actor is who starts the run; "" is the system.
	Actor string
}

// StartRun triggers a PENDING or APPROVED run.
func (e *Engine) StartRun(ctx context.Context, p StartParams) (*runstate.Snapshot, error) {
	return submissions{e}.start(ctx, p.TenantID, p.RunID, p.Actor)
}

// start triggers a submitted run: StartRun.
func (e submissions) start(ctx context.Context, tenantID, runID, actor string) (*runstate.Snapshot, error) {
	if _, err := e.runFor(ctx, tenantID, runID); err != nil {
		return nil, err
	}
	if _, err := e.mutate(ctx, runID, actorOf(actor), startDecision(runID)); err != nil {
		return nil, err
	}
	return e.GetRun(ctx, GetRunParams{TenantID: tenantID, RunID: runID})
}

// startDecision is the decision StartRun makes: a trigger, refused as an
// illegal transition on a run that has ended
// (docs/semantics.md#legal-run-transitions).
func startDecision(runID string) func(*change) error {
	trigger := triggerDecision(runID)
	return func(ch *change) error {
		if s := ch.state.Status; s.Terminal() {
			return errIllegalTransition(runMove(runID, s, runstate.RunQueued))
		}
		return trigger(ch)
	}
}

// trigger moves a run QUEUED and then RUNNING, scheduling its first steps,
// and removes the pending-trigger marker in the same batch.
func (e submissions) trigger(ctx context.Context, runID, actor string) error {
	_, err := e.mutate(ctx, runID, actorOf(actor), triggerDecision(runID))
	return err
}

// triggerDecision is the decision a trigger makes.
func triggerDecision(runID string) func(*change) error {
	return func(ch *change) error {
		s := ch.state
		switch s.Status {
		case runstate.RunPending:
			if ch.run.Definition.RequiresApproval {
				return errIllegalTransition(move{runID: runID, status: s.Status, from: "PENDING", to: "QUEUED",
					why: "run " + runID + " requires approval before it starts"})
			}
		case runstate.RunApproved:
		default:
			// Already triggered — by this submission's recovery, another engine,
			// or an earlier StartRun: starting twice is not an error.
			ch.del(pendingTriggerKey(runID))
			return nil
		}
		ch.del(pendingTriggerKey(runID))
		if err := ch.transition(runstate.RunQueued); err != nil {
			return err
		}
		ch.emit(runstate.EvRunQueued, "", 1, 0, runstate.EventData{Status: string(runstate.RunQueued)})
		return ch.admit()
	}
}

// recoverTriggers finishes triggers a crash interrupted.
func (e background) recoverTriggers(ctx context.Context) error {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: store.KeyPrefix("pt"), Limit: 100})
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range res.Items {
		errs = append(errs, e.drive(ctx, string(it.Value), triggerDecision(string(it.Value))))
	}
	return errors.Join(errs...)
}

// runFor answers a run's record when it belongs to the tenant; another
// tenant's run is not found, never forbidden, so ids leak nothing.
func (e *records) runFor(ctx context.Context, tenantID, runID string) (*runRecord, error) {
	rec, err := e.loadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if rec.TenantID != tenantID {
		return nil, runNotFound(runID)
	}
	return rec, nil
}
