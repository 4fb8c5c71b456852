package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// CreateParams is a new schedule.
type CreateParams struct {
	TenantID      string
	ScheduleID    string
	Spec          Spec
	Definition    definition.Definition
	Input         json.RawMessage
	ProjectID     string
	EnvironmentID string
	Paused        bool
	// CreatedBy is the authenticated principal; every fire submits as it.
	CreatedBy string
}

// View is a schedule as the API shows it.
type View struct {
	TenantID      string
	ScheduleID    string
	Spec          Spec
	Definition    definition.Definition
	Input         json.RawMessage
	ProjectID     string
	EnvironmentID string
	Paused        bool
	CreatedBy     string
	CreatedAt     time.Time
	LastFire      time.Time
	LastRunID     string
	Fires         uint64
	Skipped       uint64
	Missed        uint64
	Failed        uint64
	LastError     string
	// LastFireLag is how late the latest fire the spec decided was
	// submitted after its nominal time (zero until one was).
	LastFireLag  time.Duration
	Buffered     time.Time
	PendingFires int
	// NextFires are the next nominal fire times after now.
	NextFires []time.Time
}

// DefaultNextFires is how many next fire times a view shows by default.
const DefaultNextFires = 5

// MaxBackfill caps the nominal times one backfill may fire.
const MaxBackfill = 1000

// Create stores a new schedule; its first fire is the first nominal time
// after now. An id already in use in the tenant is an operation conflict.
func (s *Scheduler) Create(ctx context.Context, p CreateParams) (*View, error) {
	c, vs := p.Spec.compile()
	if len(vs) > 0 {
		return nil, invalidSpec(vs)
	}
	now := s.now()
	if c.next(now).IsZero() {
		return nil, invalidSpec([]violation{{"spec.cron", "cron.fires", "cron never fires in the next five years"}})
	}
	def := p.Definition.WithDefaults()
	if err := def.Validate(); err != nil {
		return nil, prefixed(err, "definition.")
	}
	if len(p.Input) > 0 && !json.Valid(p.Input) {
		return nil, invalidSpec([]violation{{"input", "input.json", "input must be valid JSON"}})
	}
	r := &record{FormatVersion: recordVersion, TenantID: p.TenantID, ScheduleID: p.ScheduleID, Spec: p.Spec,
		Definition: def, Input: p.Input, ProjectID: p.ProjectID, EnvironmentID: p.EnvironmentID, Paused: p.Paused,
		CreatedBy: p.CreatedBy, CreatedAt: now, Cursor: now}
	v := &versioned{rec: r}
	if err := s.save(ctx, v); err != nil {
		if errors.Is(err, errRaced) {
			return nil, &engine.Error{Code: engine.CodeOperationConflict, Message: "schedule " + p.ScheduleID + " already exists"}
		}
		return nil, err
	}
	return s.view(r, DefaultNextFires), nil
}

// Get answers a schedule with its next n fire times.
func (s *Scheduler) Get(ctx context.Context, tenantID, scheduleID string, n int) (*View, error) {
	v, err := s.read(ctx, tenantID, scheduleID)
	if err != nil {
		return nil, err
	}
	return s.view(v.rec, n), nil
}

// ListResult is one page of schedules.
type ListResult struct {
	Schedules []*View
	// NextPageToken is empty on the last page.
	NextPageToken string
}

// List pages through a tenant's schedules by id; pageToken is the last id of
// the previous page.
func (s *Scheduler) List(ctx context.Context, tenantID string, pageSize int, pageToken string) (*ListResult, error) {
	if pageSize <= 0 {
		pageSize = 100
	}
	params := &store.ScanParams{Prefix: tenantPrefix(tenantID), Limit: pageSize}
	if pageToken != "" {
		params.After = key(tenantID, pageToken)
	}
	page, err := s.store.Scan(ctx, params)
	if err != nil {
		return nil, err
	}
	out := &ListResult{}
	for _, item := range page.Items {
		v, err := decode(item)
		if err != nil {
			return nil, err
		}
		out.Schedules = append(out.Schedules, s.view(v.rec, 1))
	}
	if len(page.Items) == pageSize && page.Next != nil {
		out.NextPageToken = out.Schedules[len(out.Schedules)-1].ScheduleID
	}
	return out, nil
}

// Pause stops a schedule's fires; nominal times that pass while it is paused
// are never fired. Pausing a paused schedule changes nothing.
func (s *Scheduler) Pause(ctx context.Context, tenantID, scheduleID string) (*View, error) {
	return s.update(ctx, tenantID, scheduleID, func(r *record) bool {
		changed := !r.Paused
		r.Paused = true
		return changed
	})
}

// Resume resumes a schedule from the first nominal time after now (or after
// its cursor, if that is later).
func (s *Scheduler) Resume(ctx context.Context, tenantID, scheduleID string) (*View, error) {
	now := s.now()
	return s.update(ctx, tenantID, scheduleID, func(r *record) bool {
		if !r.Paused {
			return false
		}
		r.Paused = false
		r.Cursor = later(r.Cursor, now) // never back: a process whose clock is behind must not make fired times due again
		return true
	})
}

// TriggerParams names a schedule to fire now.
type TriggerParams struct {
	TenantID   string
	ScheduleID string
	// RequestID, when set, makes the trigger idempotent: every call with it
	// starts or answers one run (docs/semantics.md#schedules).
	RequestID string
}

// Trigger fires a schedule now, paused or not and whatever its overlap
// policy, and answers the run (trigger source manual). A trigger with a
// request id that already started its run answers that run; one whose fire
// is still pending submits that fire rather than deciding another.
func (s *Scheduler) Trigger(ctx context.Context, p TriggerParams) (*runstate.Snapshot, error) {
	f := fire{Nominal: s.now(), Source: engine.TriggerManual, RequestID: p.RequestID}
	var rec *record
	var started string
	if _, err := s.update(ctx, p.TenantID, p.ScheduleID, func(r *record) bool {
		rec, started = r, ""
		if p.RequestID == "" {
			r.Pending = append(r.Pending, f)
			return true
		}
		if started = r.triggeredRun(p.RequestID); started != "" {
			return false
		}
		if pending, ok := r.pendingTrigger(p.RequestID); ok {
			f = pending
			return false
		}
		f = fire{Nominal: s.now(), Source: engine.TriggerManual, RequestID: p.RequestID}
		r.Pending = append(r.Pending, f)
		return true
	}); err != nil {
		return nil, err
	}
	if started != "" {
		return s.runs.GetRun(ctx, engine.GetRunParams{TenantID: p.TenantID, RunID: started})
	}
	// Submitting here answers the caller; the tick that finds the fire
	// pending submits it again and finds this run.
	snap, err := s.submit(ctx, rec, f)
	if err != nil {
		return nil, err
	}
	return snap, s.advance(ctx, key(p.TenantID, p.ScheduleID))
}

// Backfill decides every nominal time in [start, end) as a fire, whatever the
// overlap policy, and answers them; the ticks submit them in order. A time
// already fired finds its run again rather than starting another.
func (s *Scheduler) Backfill(ctx context.Context, tenantID, scheduleID string, start, end time.Time) ([]time.Time, error) {
	if !end.After(start) {
		return nil, invalidSpec([]violation{{"end_time", "backfill.range", "end_time must be after start_time"}})
	}
	v, err := s.read(ctx, tenantID, scheduleID)
	if err != nil {
		return nil, err
	}
	times, err := nominalTimes(v.rec.Spec, start, end)
	if err != nil {
		return nil, err
	}
	_, err = s.update(ctx, tenantID, scheduleID, func(r *record) bool {
		for _, t := range times {
			r.Pending = append(r.Pending, fire{Nominal: t, Source: engine.TriggerSchedule, Backfill: true})
		}
		return len(times) > 0
	})
	return times, err
}

// nominalTimes answers the spec's nominal times in [start, end), at most MaxBackfill.
func nominalTimes(spec Spec, start, end time.Time) ([]time.Time, error) {
	c, vs := spec.compile()
	if len(vs) > 0 {
		return nil, invalidSpec(vs)
	}
	var times []time.Time
	for t := c.next(start.Add(-time.Millisecond)); !t.IsZero() && t.Before(end); t = c.next(t) {
		if len(times) == MaxBackfill {
			return nil, invalidSpec([]violation{{"end_time", "backfill.max_fires",
				"the range holds more than 1000 nominal times; backfill it in parts"}})
		}
		times = append(times, t)
	}
	return times, nil
}

// Delete removes a schedule; the runs it started are left alone.
func (s *Scheduler) Delete(ctx context.Context, tenantID, scheduleID string) error {
	var err error
	for range maxRaces {
		var v *versioned
		if v, err = s.read(ctx, tenantID, scheduleID); err != nil {
			return err
		}
		if err = remove(ctx, s.store, v); err == nil {
			s.stats.forget(key(tenantID, scheduleID))
		}
		if !errors.Is(err, errRaced) {
			return err
		}
	}
	return err
}

// update changes a schedule by compare-and-set, reading again after a lost
// race; a change that answers false writes nothing.
func (s *Scheduler) update(ctx context.Context, tenantID, scheduleID string, change func(*record) bool) (*View, error) {
	var err error
	for range maxRaces {
		var v *versioned
		if v, err = s.read(ctx, tenantID, scheduleID); err != nil {
			return nil, err
		}
		if !change(v.rec) {
			return s.view(v.rec, DefaultNextFires), nil
		}
		if err = s.save(ctx, v); err == nil {
			return s.view(v.rec, DefaultNextFires), nil
		}
		if !errors.Is(err, errRaced) {
			return nil, err
		}
	}
	return nil, &engine.Error{Code: engine.CodeUnavailable, Message: "schedule " + scheduleID + " is changing too often; retry", Err: err}
}

// read loads a schedule, answering not found in the API's terms.
func (s *Scheduler) read(ctx context.Context, tenantID, scheduleID string) (*versioned, error) {
	v, err := load(ctx, s.store, key(tenantID, scheduleID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, &engine.Error{Code: engine.CodeNotFound, Message: "schedule " + scheduleID + " not found"}
	}
	return v, err
}

// view answers the API's view of a record with its next n fire times.
func (s *Scheduler) view(r *record, n int) *View {
	v := &View{TenantID: r.TenantID, ScheduleID: r.ScheduleID, Spec: r.Spec.WithDefaults(), Definition: r.Definition,
		Input: r.Input, ProjectID: r.ProjectID, EnvironmentID: r.EnvironmentID, Paused: r.Paused,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, LastFire: r.LastFire, LastRunID: r.LastRunID,
		Fires: r.Fires, Skipped: r.Skipped, Missed: r.Missed, Failed: r.Failed, LastError: r.LastError,
		PendingFires: len(r.Pending)}
	if r.Buffered != nil {
		v.Buffered = *r.Buffered
	}
	if r.LastFireLag != nil {
		v.LastFireLag = *r.LastFireLag
	}
	c, vs := r.Spec.compile()
	if len(vs) > 0 {
		return v
	}
	t := s.now()
	if r.Cursor.After(t) {
		t = r.Cursor
	}
	for range n {
		if t = c.next(t); t.IsZero() {
			break
		}
		v.NextFires = append(v.NextFires, t)
	}
	return v
}

// invalidSpec is the API's invalid-argument error for violations.
func invalidSpec(vs []violation) error {
	out := &engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid request"}
	for _, v := range vs {
		out.Violations = append(out.Violations, engine.FieldViolation{Field: v.field, Rule: v.rule, Message: v.message})
	}
	return out
}

// prefixed answers a definition's validation error as the API's
// invalid-argument error, with its field paths prefixed.
func prefixed(err error, prefix string) error {
	var e *definition.Error
	if !errors.As(err, &e) {
		return err
	}
	out := &engine.Error{Code: engine.CodeInvalidArgument, Message: e.Message}
	for _, v := range e.Violations {
		out.Violations = append(out.Violations, engine.FieldViolation{Field: prefix + v.Field, Rule: v.Rule, Message: v.Message})
	}
	return out
}
