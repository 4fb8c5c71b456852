package schedule

import (
	"context"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
)

// maxDecisionsPerTick bounds how many nominal times one decision walks
// (missed ones included), so that a long downtime is caught up over several
// ticks instead of in one unbounded loop.
const maxDecisionsPerTick = 10000

// decide moves every nominal time in (Cursor, now] into the record: fired
// (pending), skipped, buffered or missed, by the overlap policy and the
// catch-up window (docs/semantics.md#schedules). A paused schedule decides
// nothing. It answers whether the record changed.
func (s *Scheduler) decide(ctx context.Context, r *record, now time.Time) (bool, error) {
	if r.Paused {
		return false, nil
	}
	c, vs := r.Spec.compile()
	if len(vs) > 0 {
		return false, invalidSpec(vs) // stored specs were checked; a newer build may read them differently
	}
	spec := r.Spec.WithDefaults()
	o := &overlap{s: s, ctx: ctx, r: r}
	changed := false
	if r.Buffered != nil {
		busy, err := o.busy()
		if err != nil {
			return false, err
		}
		if !busy {
			r.Pending = append(r.Pending, fire{Nominal: *r.Buffered, Source: engine.TriggerSchedule})
			r.Buffered, changed = nil, true
		}
	}
	for range maxDecisionsPerTick {
		t := c.next(r.Cursor)
		if t.IsZero() || t.After(now) {
			break
		}
		r.Cursor, changed = t, true
		if now.Sub(t) > spec.CatchupWindow {
			r.Missed++
			continue
		}
		if err := o.apply(spec.Overlap, t); err != nil {
			return false, err
		}
	}
	return changed, nil
}

// overlap applies an overlap policy to one decision's fires; it reads the
// previous run's status at most once.
type overlap struct {
	s       *Scheduler
	ctx     context.Context
	r       *record
	known   bool
	running bool
}

// busy reports whether a fire now would overlap: a fire is pending, or the
// previous run is not terminal.
func (o *overlap) busy() (bool, error) {
	if len(o.r.Pending) > 0 {
		return true, nil
	}
	if !o.known {
		running, err := o.previousRunning()
		if err != nil {
			return false, err
		}
		o.known, o.running = true, running
	}
	return o.running, nil
}

// previousRunning reads the latest fire's run; a run no longer found (removed
// by retention) is not running.
func (o *overlap) previousRunning() (bool, error) {
	if o.r.LastRunID == "" {
		return false, nil
	}
	snap, err := o.s.runs.GetRun(o.ctx, engine.GetRunParams{TenantID: o.r.TenantID, RunID: o.r.LastRunID})
	if engine.CodeOf(err) == engine.CodeNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !snap.Status.Terminal(), nil
}

// apply decides one nominal time inside the catch-up window.
func (o *overlap) apply(policy OverlapPolicy, t time.Time) error {
	f := fire{Nominal: t, Source: engine.TriggerSchedule}
	if policy == OverlapAllowAll {
		o.r.Pending = append(o.r.Pending, f)
		return nil
	}
	busy, err := o.busy()
	switch {
	case err != nil:
		return err
	case !busy:
		o.r.Pending = append(o.r.Pending, f)
	case policy == OverlapBufferOne:
		if o.r.Buffered != nil {
			o.r.Skipped++
		}
		o.r.Buffered = &t
	default:
		o.r.Skipped++
	}
	return nil
}

// submitPending submits up to MaxFiresPerTick pending fires in order and
// records what each did; it answers how many left the pending list. A fire
// refused for good (an invalid definition, a conflicting run_request_id) is
// counted failed and dropped; one refused for now (unavailable, overloaded)
// stops the round and stays pending.
func (s *Scheduler) submitPending(ctx context.Context, r *record) int {
	done := 0
	for done < len(r.Pending) && done < s.cfg.MaxFiresPerTick {
		f := r.Pending[done]
		snap, err := s.submit(ctx, r, f)
		if err != nil && transient(err) {
			break
		}
		done++
		if err != nil {
			r.Failed++
			r.LastError = err.Error()
			s.log.Warn("schedule fire refused", "tenant", r.TenantID, "schedule", r.ScheduleID,
				"nominal", f.Nominal, "error", err.Error())
			continue
		}
		r.recordFire(f, snap.RunID, s.now())
	}
	r.Pending = r.Pending[done:]
	if len(r.Pending) == 0 {
		r.Pending = nil
	}
	return done
}

// submit starts (or finds) the run of one fire.
func (s *Scheduler) submit(ctx context.Context, r *record, f fire) (*runstate.Snapshot, error) {
	res, err := s.runs.SubmitRun(ctx, engine.SubmitParams{
		TenantID: r.TenantID, ProjectID: r.ProjectID, EnvironmentID: r.EnvironmentID,
		Definition: r.Definition, Input: r.Input, RunRequestID: f.runRequestID(r.ScheduleID),
		Start: true, SubmittedBy: r.CreatedBy, TriggerSource: f.Source,
	})
	if err != nil {
		return nil, err
	}
	return res.Run, nil
}

// transient reports whether a refused fire should be tried again later.
func transient(err error) bool {
	switch engine.CodeOf(err) {
	case engine.CodeUnavailable, engine.CodeResourceExhausted, engine.CodeInternal:
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
