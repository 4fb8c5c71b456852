package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runlog"
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
	// Ref, when set, names a stored definition (Definitions) to run
	// instead of Definition, which must then be empty.
	Ref *DefinitionRef
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
	// SearchAttributes are set on the run (docs/semantics.md#search-attributes):
	// each a name, a type (keyword, int, double, bool, time) and its JSON value.
	SearchAttributes []runstate.SearchAttribute
	// Priority is the run's priority for its tasks, 1 (first) to 5, over
	// its definition's; zero: the definition's (docs/semantics.md#priority).
	Priority int
	// traceParent is kept with the run: its trace (observe.go).
	traceParent string
	// parent, for a child run, is the run and step that start it
	// (subworkflow.go).
	parent *record.Parent
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
	// Version is the version of the run's checkpoint that Run shows when
	// this engine's commit answered it (0 otherwise): AwaitParams.Seen.
	Version uint64
}

// A submission: submit builds a run's record, persists it exactly once per
// run request (persistSubmission), and triggers the run (triggerRun).
// SubmitRun and StartRun are its entry points.

// engine answers the Engine whose submissions these are.

// SubmitRun validates a definition and persists the run PENDING before it
// answers (docs/semantics.md#submission). With Start the run is triggered in
// the same commit that persists it (startsWithSubmission): its log records
// RunSubmitted, then the trigger's events, and the first tasks are handed to
// waiting polls in that commit. A run that needs approval is persisted in one
// commit with a pending-trigger marker, which only a trigger removes and
// recovery (Tick) finishes, and its trigger is tried in a second, refused as
// StartRun's would be.
func (e *Engine) SubmitRun(ctx context.Context, p SubmitParams) (*SubmitResult, error) {
	return submit(ctx, e, p)
}

// submit validates, persists and triggers a run: SubmitRun.
func submit(ctx context.Context, e *Engine, p SubmitParams) (res *SubmitResult, err error) {
	if e.cfg.Observer != nil {
		var ended func(*SubmitResult, error)
		ctx, ended = submitObserved(ctx, e, &p)
		defer func() { ended(res, err) }()
	}
	if err := resolveRef(ctx, e, &p); err != nil {
		return nil, err
	}
	if err := resolveSubWorkflows(ctx, e, &p); err != nil {
		return nil, err
	}
	rec, stored, err := newRunRecord(e, p)
	if err != nil {
		return nil, err
	}
	if p.Start {
		if err := checkAdmission(ctx, e, rec); err != nil {
			return nil, err
		}
	}
	var existing string
	var committed *runstate.State
	for range maxTypeRaces {
		var attrs attributeChange
		if attrs, err = submissionAttributes(ctx, e, rec, p); err != nil {
			return nil, err
		}
		existing, committed, err = persistSubmission(ctx, e, rec, stored, p, attrs)
		if err == nil || !lostTypeRace(err) && !lostPlanRace(err) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if existing != "" {
		snap, err := e.GetRun(ctx, GetRunParams{TenantID: p.TenantID, RunID: existing})
		return &SubmitResult{Run: snap, Existing: true}, err
	}
	if p.Start && !startsWithSubmission(rec, p) {
		if err := triggerRun(ctx, e, rec.RunID, p.SubmittedBy); err != nil {
			return nil, err
		}
		committed = nil // the trigger moved the run on
	}
	if committed != nil {
		// The run as the submission's own commit left it: no read needed.
		return &SubmitResult{Run: snapshotOf(rec, committed), Version: e.records.CommittedVersion(rec.RunID, committed)}, nil
	}
	snap, err := e.GetRun(ctx, GetRunParams{TenantID: p.TenantID, RunID: rec.RunID})
	return &SubmitResult{Run: snap}, err
}

// maxTypeRaces bounds how often a submission is made again after another
// recorded the type of an attribute name it took as new (lostTypeRace), or
// stored the plan record it took as not stored (lostPlanRace).
const maxTypeRaces = 3

// resolveRef reads the stored definition a submission names into its
// Definition (docs/semantics.md#definition-registry).
func resolveRef(ctx context.Context, e *Engine, p *SubmitParams) error {
	if p.Ref == nil {
		return nil
	}
	if len(p.Definition.Actions) > 0 || p.Definition.PlanID != "" {
		return fault.Invalid(fault.Violation("definition", "definition.one_of",
			"give either definition or definition_ref, not both"))
	}
	stored, err := getDefinition(ctx, e, p.TenantID, *p.Ref)
	if err != nil {
		return err
	}
	p.Definition = stored.Definition
	return nil
}

// storedSubmission is a submission's run as stored: its run record
// (record.EncodeRun) and its definition's canonical JSON, which the plan
// record holds (record.EncodePlan) when the submission writes it.
type storedSubmission struct {
	run, definitionJSON []byte
}

// newRunRecord validates the submission and builds the run's record, and
// answers it as stored too.
//
// The definition is prepared (defaults, validation, canonical JSON, plan
// SHA) once per distinct definition this process sees (preparedDefinitions):
// runs of the same definition share its prepared form, which nothing
// changes.
func newRunRecord(e *Engine, p SubmitParams) (*record.Run, storedSubmission, error) {
	prepared, flow, err := prepareDefinition(p.Definition)
	if err != nil {
		return nil, storedSubmission{}, err
	}
	if len(p.Input) > 0 && !json.Valid(p.Input) {
		return nil, storedSubmission{}, fault.Invalid(fault.Violation("input", "input.json", "input must be valid JSON"))
	}
	if p.Priority != 0 {
		if err := flowcontrol.ValidPriority(p.Priority); err != nil {
			return nil, storedSubmission{}, fault.Invalid(flowViolation("priority", err))
		}
	}
	rec := &record.Run{
		FormatVersion: record.RunVersion,
		RunID:         newRunID(),
		TenantID:      p.TenantID,
		ProjectID:     cmp.Or(p.ProjectID, "default"),
		EnvironmentID: cmp.Or(p.EnvironmentID, "default"),
		RunRequestID:  p.RunRequestID,
		SubmittedBy:   p.SubmittedBy,
		TriggerSource: p.TriggerSource,
		Definition:    prepared.Definition,
		Input:         p.Input,
		PlanSHA256:    prepared.PlanSHA256,
		CreatedAt:     clockNow(e),
		TraceParent:   p.traceParent,
		Parent:        p.parent,
		Priority:      p.Priority,
	}
	if err := checkFlowAtSubmit(rec, flow); err != nil {
		return nil, storedSubmission{}, err
	}
	keyPrg, err := runKeyProgram(&prepared.Definition, prepared.PlanSHA256)
	if err != nil {
		return nil, storedSubmission{}, err
	}
	if rec.ConcurrencyKey, err = runKeyAtSubmit(rec, keyPrg); err != nil {
		return nil, storedSubmission{}, err
	}
	body, err := record.EncodeRun(rec)
	if err != nil {
		return nil, storedSubmission{}, err
	}
	return rec, storedSubmission{run: body, definitionJSON: prepared.JSON}, nil
}

// prepareDefinition prepares a definition as a submission stores it
// (definition.Prepare, through preparedDefinitions) and compiles its flow
// control, answering every problem as an invalid-argument error naming
// the API's field paths under "definition.".
func prepareDefinition(d definition.Definition) (*definition.Prepared, *flowPlan, error) {
	prepared, err := preparedDefinitions.Prepare(d)
	if err != nil {
		return nil, nil, prefixViolations(err, "definition.")
	}
	if pr := prepared.Definition.Priority; pr != 0 {
		if err := flowcontrol.ValidPriority(pr); err != nil {
			return nil, nil, fault.Invalid(flowViolation("definition.priority", err))
		}
	}
	flow, err := flowPlanOf(&prepared.Definition, prepared.PlanSHA256)
	if err != nil {
		return nil, nil, err
	}
	if _, err := runKeyProgram(&prepared.Definition, prepared.PlanSHA256); err != nil {
		return nil, nil, err
	}
	return prepared, flow, nil
}

// CheckDefinition validates a definition as a submission does, storing
// nothing: nil, or an invalid-argument error naming each problem by its
// API field path under "definition." (a key that reads only the input is
// checked against an input at submission).
func CheckDefinition(d definition.Definition) error {
	_, _, err := prepareDefinition(d)
	return err
}

// preparedDefinitionsSize bounds the definitions preparedDefinitions holds:
// the distinct workflows a deployment submits, not its runs.
const preparedDefinitionsSize = 256

// preparedDefinitions remembers the definitions submissions prepared
// (definition.PreparedCache: exact, never one definition's for another's).
var preparedDefinitions = definition.NewPreparedCache(preparedDefinitionsSize)

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
	return fault.InvalidArgument(e.Message, violations...)
}

// persistSubmission writes the run PENDING in one batch, triggered too when
// it starts with the submission, and answers the state it committed (nil
// when an earlier attempt whose outcome was unknown had committed it). When
// RunRequestID names a run already submitted, it writes nothing and answers
// that run's id. The first submission of a plan in its tenant writes the
// plan record in the same batch (planToWrite).
func persistSubmission(ctx context.Context, e *Engine, rec *record.Run, stored storedSubmission, p SubmitParams, attrs attributeChange) (string, *runstate.State, error) {
	var rrKey []byte
	if rec.RunRequestID != "" {
		d := rec.Definition
		rrKey = record.RunRequestKey(rec.TenantID, rec.ProjectID, rec.EnvironmentID, d.PlanID, d.PlanVersion, rec.RunRequestID)
		unlock := e.locks.lockSubmission(rrKey) // single-owner stores without CAS check the key under it
		defer unlock()
	}
	plan, err := planToWrite(ctx, e, rec, stored.definitionJSON)
	if err != nil {
		return "", nil, err
	}
	ch, err := commitDecision(ctx, e, decision{
		runID: rec.RunID, actor: decide.ActorOf(p.SubmittedBy), newRun: rec, initial: keysTracked(decide.InitialState(rec.RunID, &rec.Definition, rec.CreatedAt)),
		prepare: func(ctx context.Context, fresh bool) (string, bool, error) {
			if !fresh {
				return rec.RunID, false, nil
			}
			done, err := submitted(ctx, e, rec.RunID) // an attempt whose outcome is unknown may have landed
			return rec.RunID, done, err
		},
		decide: func(ch *change) error {
			submitRecords(ch, p, rrKey, stored.run)
			plan.write(ch)
			attrs.apply(ch, "", 1)
			if !startsWithSubmission(rec, p) {
				return nil
			}
			if err := triggerDecision((*decide.Decision).Trigger)(ch); err != nil {
				return err
			}
			dropTransientWrites(ch)
			return nil
		},
		contended: func() error {
			return fault.Unavailable("", "submission outcome unknown; retry with the same run_request_id")
		},
	})
	switch {
	case err == nil:
		// The run is driven next (the start, the first poll): keep what was
		// just written so that nothing needs reading back, and its plan,
		// if this batch stored it.
		plan.stored(e, rec)
		e.records.RunWritten(rec)
		if ch == nil {
			return "", nil, nil
		}
		return "", ch.state, nil
	case rrKey != nil && conflictOn(err, rrKey):
		id, err := existingRun(ctx, e, rrKey, rec)
		return id, nil, err
	case plan.key != nil && conflictOn(err, plan.key):
		// Another submission stored the plan first: it is stored, and this
		// one is made again without it (submit).
		plan.stored(e, rec)
	}
	return "", nil, err
}

// planWrite is a submission's plan record, when the submission writes it:
// the first of its plan in its tenant (docs/persisted-format.md, pl:).
type planWrite struct {
	// key is the plan record's key; nil: the plan is stored already, and
	// the submission writes nothing of it.
	key, value []byte
}

// planToWrite answers the plan record a submission writes: none when the
// plan is known stored (the plan cache, else one read of the record),
// else the record, written on an absent-condition.
func planToWrite(ctx context.Context, e *Engine, rec *record.Run, definitionJSON []byte) (planWrite, error) {
	stored, err := e.records.PlanStored(ctx, rec.TenantID, rec.PlanSHA256)
	if err != nil || stored {
		return planWrite{}, err
	}
	return planWrite{key: record.PlanKey(rec.TenantID, rec.PlanSHA256), value: record.EncodePlan(definitionJSON)}, nil
}

// write puts the plan record in the submission's batch, on the condition
// that it is absent: the record is written once and never changed.
func (w planWrite) write(c *change) {
	if w.key == nil {
		return
	}
	c.require(store.IfAbsent(w.key))
	c.ops = append(c.ops, store.Put(w.key, w.value))
}

// stored notes the plan record written, by this submission's batch or by
// the one that beat it, as stored (nothing to note when the submission
// knew it stored).
func (w planWrite) stored(e *Engine, rec *record.Run) {
	if w.key != nil {
		e.records.PlanWritten(rec.TenantID, rec.PlanSHA256, &record.Plan{Definition: rec.Definition})
	}
}

// lostPlanRace reports whether a submission's commit failed because
// another submission of its plan stored the plan record first: the
// submission is made again, and writes none (persistSubmission noted the
// plan stored).
func lostPlanRace(err error) bool {
	var cf *store.ConditionFailedError
	return errors.As(err, &cf) && bytes.HasPrefix(cf.Key, keyspace.Plan.KeyPrefix())
}

// submitRecords is the decision a submission makes: the run's record (recBody, as
// stored) and its first event, and the run request it answers; its rs: and
// sx: entries, which list it, are every decision's (indexForSearch).
func submitRecords(c *change, p SubmitParams, rrKey, recBody []byte) {
	rec := c.run
	context := runContext(rec, p.SubmittedBy)
	c.emit(runstate.EvRunSubmitted, "", 1, 0, runstate.EventData{
		Status:       string(runstate.RunPending),
		Context:      &context,
		PlanID:       rec.Definition.PlanID,
		PlanSHA256:   rec.PlanSHA256,
		RunRequestID: rec.RunRequestID,
	})
	c.ops = append(c.ops, store.Put(record.RunKey(rec.RunID), recBody))
	if rrKey != nil {
		c.require(store.IfAbsent(rrKey))
		c.ops = append(c.ops, store.Put(rrKey, []byte(rec.RunID)))
	}
	if p.Start {
		c.ops = append(c.ops, store.Put(record.PendingTriggerKey(rec.RunID), []byte(rec.RunID)))
	}
}

// startsWithSubmission reports whether a submission's trigger commits with
// it (docs/semantics.md#submission): with Start, unless the run needs
// approval, whose trigger is refused after the run is persisted.
func startsWithSubmission(rec *record.Run, p SubmitParams) bool {
	return p.Start && !rec.Definition.RequiresApproval
}

// dropTransientWrites forgets, in a decision that creates its run, every
// write of a key that the decision put and last deleted (the pending-trigger
// marker the trigger removes, the run's status index under PENDING and
// QUEUED, passed through on the way to RUNNING): a new run's keys did not
// exist before, so the delete has nothing to remove.
func dropTransientWrites(c *change) {
	if !c.newRun {
		return
	}
	var gone [][]byte // put earlier, and deleted after its last put
	for i, op := range c.ops {
		if op.Kind == store.OpPut || !putIn(c.ops[:i], op.Key) || putIn(c.ops[i+1:], op.Key) {
			continue
		}
		if !slices.ContainsFunc(gone, func(k []byte) bool { return string(k) == string(op.Key) }) {
			gone = append(gone, op.Key)
		}
	}
	for _, key := range gone {
		c.dropWrites(key)
	}
}

// putIn reports whether one of ops puts key.
func putIn(ops []store.Op, key []byte) bool {
	for _, op := range ops {
		if op.Kind == store.OpPut && string(op.Key) == string(key) {
			return true
		}
	}
	return false
}

// submitted reports whether the run's checkpoint exists (an ambiguous commit landed).
func submitted(ctx context.Context, e *Engine, runID string) (bool, error) {
	_, err := e.store.Get(ctx, runlog.CheckpointKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// existingRun answers the run a run_request_id already names; the same id
// with a different definition is a conflict, not a silent replay.
func existingRun(ctx context.Context, e *Engine, rrKey []byte, rec *record.Run) (string, error) {
	item, err := e.store.Get(ctx, rrKey)
	if err != nil {
		return "", err
	}
	prior, err := e.records.LoadRun(ctx, string(item.Value))
	if err != nil {
		return "", err
	}
	if prior.PlanSHA256 != rec.PlanSHA256 {
		return "", fault.OperationConflict(prior.RunID, "",
			"run_request_id "+rec.RunRequestID+" already names run "+prior.RunID+" with a different definition")
	}
	return prior.RunID, nil
}

// runContext answers the run context a decision about r sees, triggered
// by triggeredBy.
func runContext(r *record.Run, triggeredBy string) runstate.RunContext {
	source := r.TriggerSource
	if source == "" {
		source = TriggerAPI // records written before trigger sources were kept
	}
	return runstate.RunContext{TenantID: r.TenantID, ProjectID: r.ProjectID, EnvironmentID: r.EnvironmentID,
		TriggeredBy: decide.ActorOf(triggeredBy), TriggerSource: source}
}

// recoverTriggers finishes triggers a crash interrupted.
func recoverTriggers(ctx context.Context, e *Engine) error {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyspace.PendingTrigger.KeyPrefix(), Limit: 100})
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range res.Items {
		errs = append(errs, drive(ctx, e, string(it.Value), triggerDecision((*decide.Decision).Trigger)))
	}
	return errors.Join(errs...)
}

// keysTracked marks a new run's checkpoint as the record of its events'
// idempotency keys (docs/semantics.md#event-idempotency-key): its events
// are written without key rows.
func keysTracked(s *runstate.State) *runstate.State {
	s.KeysTracked = true
	return s
}
