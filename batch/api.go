package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// The bounds of docs/semantics.md#batches.
const (
	// MaxRuns is the most runs one batch selects.
	MaxRuns = 10000
	// DefaultRate is the rate of a batch that names none, in runs per second.
	DefaultRate = 10.0
	// MaxRate is the highest rate.
	MaxRate = 1000.0
	// membersPerCommit bounds the runs StartBatch writes in one commit.
	membersPerCommit = 500
)

// StartParams starts a batch.
type StartParams struct {
	TenantID  string
	BatchID   string
	Operation Operation
	Args
	// RunIDs or Query selects the runs: exactly one.
	RunIDs []string
	Query  string
	// Rate is the most runs per second (0: DefaultRate).
	Rate      float64
	CreatedBy string
}

// View is a batch as the API shows it.
type View struct {
	TenantID, BatchID string
	Operation         Operation
	Args
	Query                                   string
	Rate                                    float64
	State                                   State
	Total, Done, Succeeded, Failed, Skipped int
	CreatedBy                               string
	CreatedAt, EndedAt                      time.Time
	// Owner is the weftd process driving it, while one does.
	Owner string
}

// RunView is one run of a batch and how the operation went on it.
type RunView struct {
	RunID         string
	Outcome       Outcome
	Code, Message string
	At            time.Time
}

// Start stores a batch and answers it; the same batch id again answers the
// batch stored first (existing true), whatever this request asks.
func (b *Batches) Start(ctx context.Context, p StartParams) (*View, bool, error) {
	if v, err := load(ctx, b.store, key(p.TenantID, p.BatchID)); err == nil {
		return viewOf(v.rec), true, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}
	if err := b.check(&p); err != nil {
		return nil, false, err
	}
	runIDs := p.RunIDs
	if p.Query != "" {
		ids, err := b.cfg.Select(ctx, p.TenantID, p.Query, MaxRuns+1)
		if err != nil {
			return nil, false, err
		}
		if len(ids) > MaxRuns {
			return nil, false, invalid("query", "query.max_runs", fmt.Sprintf("the query selects more than %d runs; narrow it", MaxRuns))
		}
		runIDs = ids
	}
	now := b.now()
	rec := &record{FormatVersion: recordVersion, TenantID: p.TenantID, BatchID: p.BatchID, Operation: p.Operation, Args: p.Args,
		Query: p.Query, Rate: p.Rate, Total: len(runIDs), Nonce: uuid.NewString(), State: StateRunning, CreatedBy: p.CreatedBy,
		CreatedAt: now, NextAt: now}
	if rec.Total == 0 {
		rec.State, rec.EndedAt = StateCompleted, now
	}
	if err := b.writeMembers(ctx, rec, runIDs); err != nil {
		return nil, false, err
	}
	v := &versioned{rec: rec}
	var extra []store.Op
	if rec.State == StateRunning {
		extra = append(extra, store.Put(activeKey(rec.TenantID, rec.BatchID), key(rec.TenantID, rec.BatchID)))
	}
	switch err := save(ctx, b.store, v, extra...); {
	case errors.Is(err, errRaced): // started since the read: answered as it was
		first, err := load(ctx, b.store, key(p.TenantID, p.BatchID))
		if err != nil {
			return nil, false, err
		}
		return viewOf(first.rec), true, nil
	case err != nil:
		return nil, false, err
	}
	b.kick()
	return viewOf(rec), false, nil
}

// writeMembers writes the selection under the record's nonce, before the
// record: a racer's selection under its own nonce is never read.
func (b *Batches) writeMembers(ctx context.Context, rec *record, runIDs []string) error {
	for from := 0; from < len(runIDs); from += membersPerCommit {
		batch := &store.Batch{}
		for i := from; i < min(from+membersPerCommit, len(runIDs)); i++ {
			op, err := putMember(rec, i, &member{RunID: runIDs[i]})
			if err != nil {
				return err
			}
			batch.Ops = append(batch.Ops, op)
		}
		if _, err := b.store.Commit(ctx, batch); err != nil {
			return fmt.Errorf("write batch %s's runs: %w", rec.BatchID, err)
		}
	}
	return nil
}

// check validates a start request and applies its defaults.
func (b *Batches) check(p *StartParams) error {
	switch {
	case p.BatchID == "":
		return invalid("batch_id", "batch_id.required", "batch_id must not be empty")
	case (len(p.RunIDs) > 0) == (p.Query != ""):
		return invalid("run_ids", "selection.exactly_one", "give exactly one of run_ids and query")
	case len(p.RunIDs) > MaxRuns:
		return invalid("run_ids", "run_ids.max_items", fmt.Sprintf("at most %d runs, got %d", MaxRuns, len(p.RunIDs)))
	case p.Query != "" && b.cfg.Select == nil:
		return invalid("query", "query.unavailable", "this weftd cannot select runs by a query; give run_ids")
	case math.IsNaN(p.Rate) || p.Rate < 0 || p.Rate > MaxRate:
		return invalid("rate", "rate.range", fmt.Sprintf("rate must be between 0 and %g runs per second, got %s", MaxRate, strconv.FormatFloat(p.Rate, 'g', -1, 64)))
	}
	if p.Rate == 0 {
		p.Rate = DefaultRate
	}
	seen := make(map[string]bool, len(p.RunIDs))
	for i, id := range p.RunIDs {
		field := fmt.Sprintf("run_ids[%d]", i)
		switch {
		case id == "":
			return invalid(field, "run_ids.non_empty", "a run id must not be empty")
		case seen[id]:
			return invalid(field, "run_ids.unique", "run "+id+" is named twice")
		}
		seen[id] = true
	}
	return checkArgs(p.Operation, &p.Args)
}

// checkArgs refuses an operation without the arguments it needs.
func checkArgs(op Operation, a *Args) error {
	switch op {
	case OpCancel, OpPause, OpResume, OpDelete:
	case OpRerunFrom:
		if a.FromStep == "" {
			return invalid("from_step", "from_step.required", "rerun_from needs from_step")
		}
	case OpRetryStep:
		if a.ActionID == "" {
			return invalid("action_id", "action_id.required", "retry_step needs action_id")
		}
	case OpSignal:
		if a.SignalName == "" {
			return invalid("signal_name", "signal_name.required", "signal needs signal_name")
		}
		if len(a.Payload) > 0 && !json.Valid(a.Payload) {
			return invalid("payload", "payload.json", "payload must be valid JSON")
		}
	default:
		return invalid("operation", "operation.known", "operation must be one of cancel, pause, resume, rerun_from, retry_step, signal, delete")
	}
	return nil
}

// invalid answers the engine's invalid_argument naming field and rule.
func invalid(field, rule, message string) error {
	return &engine.Error{Code: engine.CodeInvalidArgument, Message: field + ": " + message,
		Violations: []engine.FieldViolation{{Field: field, Rule: rule, Message: message}}}
}

// Describe answers a batch and a page of its runs, from the page token (the
// index of the first run, in decimal).
func (b *Batches) Describe(ctx context.Context, tenant, id string, pageSize int, pageToken string) (*View, []RunView, string, error) {
	v, err := b.loadView(ctx, tenant, id)
	if err != nil {
		return nil, nil, "", err
	}
	from := 0
	if pageToken != "" {
		if from, err = strconv.Atoi(pageToken); err != nil || from < 0 {
			return nil, nil, "", invalid("page_token", "page_token.format", "page_token is not one this call answered")
		}
	}
	if pageSize <= 0 {
		pageSize = 100
	}
	params := &store.ScanParams{Prefix: runsPrefix(v.rec), Limit: pageSize}
	if from > 0 {
		params.After = runKey(v.rec, from-1)
	}
	page, err := b.store.Scan(ctx, params)
	if err != nil {
		return nil, nil, "", err
	}
	runs := make([]RunView, 0, len(page.Items))
	for _, item := range page.Items {
		var m member
		if err := json.Unmarshal(item.Value, &m); err != nil {
			return nil, nil, "", fmt.Errorf("batch run %q: %w", item.Key, err)
		}
		runs = append(runs, RunView{RunID: m.RunID, Outcome: m.Outcome, Code: m.Code, Message: m.Message, At: m.At})
	}
	next := ""
	if to := from + len(runs); len(runs) == pageSize && to < v.rec.Total {
		next = strconv.Itoa(to)
	}
	return viewOf(v.rec), runs, next, nil
}

// loadView reads a batch of the tenant; another tenant's is not found.
func (b *Batches) loadView(ctx context.Context, tenant, id string) (*versioned, error) {
	v, err := load(ctx, b.store, key(tenant, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, &engine.Error{Code: engine.CodeNotFound, Message: "batch " + id + " not found"}
	}
	return v, err
}

// Cancel stops a running batch: the runs not acted on yet are left alone
// (SKIPPED). Cancelling an ended batch answers it as it is.
func (b *Batches) Cancel(ctx context.Context, tenant, id string) (*View, error) {
	for range maxRaces {
		v, err := b.loadView(ctx, tenant, id)
		if err != nil {
			return nil, err
		}
		r := v.rec
		if r.State != StateRunning {
			return viewOf(r), nil
		}
		r.State, r.EndedAt, r.Skipped = StateCancelled, b.now(), r.Total-r.Next
		r.Owner, r.LeaseUntil = "", time.Time{}
		err = save(ctx, b.store, v, store.Delete(activeKey(tenant, id)))
		if errors.Is(err, errRaced) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return viewOf(r), nil
	}
	return nil, &engine.Error{Code: engine.CodeUnavailable, Message: "batch " + id + " is changing too fast; retry"}
}

// List answers a page of the tenant's batches by id, from after the page
// token (a batch id).
func (b *Batches) List(ctx context.Context, tenant string, pageSize int, pageToken string) ([]*View, string, error) {
	if pageSize <= 0 {
		pageSize = 50
	}
	params := &store.ScanParams{Prefix: keyspace.Batch.KeyPrefix(tenant), Limit: pageSize}
	if pageToken != "" {
		params.After = key(tenant, pageToken)
	}
	page, err := b.store.Scan(ctx, params)
	if err != nil {
		return nil, "", err
	}
	out := make([]*View, 0, len(page.Items))
	for _, item := range page.Items {
		var r record
		if err := json.Unmarshal(item.Value, &r); err != nil {
			return nil, "", fmt.Errorf("batch record %q: %w", item.Key, err)
		}
		out = append(out, viewOf(&r))
	}
	next := ""
	if len(page.Items) == pageSize && page.Next != nil {
		next = out[len(out)-1].BatchID
	}
	return out, next, nil
}

// viewOf answers what the API shows of a record.
func viewOf(r *record) *View {
	v := &View{TenantID: r.TenantID, BatchID: r.BatchID, Operation: r.Operation, Args: r.Args, Query: r.Query, Rate: r.Rate,
		State: r.State, Total: r.Total, Done: r.Succeeded + r.Failed, Succeeded: r.Succeeded, Failed: r.Failed, Skipped: r.Skipped,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, EndedAt: r.EndedAt}
	if r.State == StateRunning {
		v.Owner = r.Owner
	}
	return v
}
