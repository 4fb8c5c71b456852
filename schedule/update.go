package schedule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/store"
)

// SpecChange changes some of a spec's fields; a nil field keeps its value.
// Cron and Interval each replace the trigger, so at most one may be set.
type SpecChange struct {
	Cron          *string
	Interval      *time.Duration
	TimeZone      *string
	Overlap       *OverlapPolicy
	CatchupWindow *time.Duration
}

// empty reports whether the change changes nothing.
func (c SpecChange) empty() bool {
	return c.Cron == nil && c.Interval == nil && c.TimeZone == nil && c.Overlap == nil && c.CatchupWindow == nil
}

// applied answers spec with the change made.
func (c SpecChange) applied(spec Spec) Spec {
	if c.Cron != nil {
		spec.Cron, spec.Interval = *c.Cron, 0
	}
	if c.Interval != nil {
		spec.Cron, spec.Interval = "", *c.Interval
	}
	if c.TimeZone != nil {
		spec.TimeZone = *c.TimeZone
	}
	if c.Overlap != nil {
		spec.Overlap = *c.Overlap
	}
	if c.CatchupWindow != nil {
		spec.CatchupWindow = *c.CatchupWindow
	}
	return spec
}

// UpdateParams changes an existing schedule: its spec's fields, the
// definition its fires submit and their input. Nil keeps what is stored.
type UpdateParams struct {
	TenantID   string
	ScheduleID string
	Spec       SpecChange
	Definition *definition.Definition
	// Input replaces every later run's input; JSON null clears it.
	Input json.RawMessage
}

// changesSubmissions reports whether the update changes what a fire submits.
func (p UpdateParams) changesSubmissions() bool { return p.Definition != nil || p.Input != nil }

// check refuses an update that is invalid whatever the stored schedule is,
// naming the field: nothing to change, both a cron and an interval, an
// invalid definition or input.
func (p UpdateParams) check() (*UpdateParams, error) {
	if p.Spec.empty() && !p.changesSubmissions() {
		return nil, invalidSpec([]violation{{"spec", "update.changes", "give at least one of spec, definition and input to change"}})
	}
	if p.Spec.Cron != nil && p.Spec.Interval != nil {
		return nil, invalidSpec([]violation{{"spec.trigger", "oneof", "give either cron or interval_ms, not both"}})
	}
	if p.Definition != nil {
		def := p.Definition.WithDefaults()
		if err := def.Validate(); err != nil {
			return nil, prefixed(err, "definition.")
		}
		p.Definition = &def
	}
	if p.Input != nil && !json.Valid(p.Input) {
		return nil, invalidSpec([]violation{{"input", "input.json", "input must be valid JSON"}})
	}
	return &p, nil
}

// apply makes the change to a record read at now; a spec that does not
// compile, or a cron that no longer fires, is refused naming its field.
func (p *UpdateParams) apply(r *record, now time.Time) error {
	spec := p.Spec.applied(r.Spec)
	c, vs := spec.compile()
	if len(vs) > 0 {
		return invalidSpec(vs)
	}
	if c.next(now).IsZero() {
		return invalidSpec([]violation{{"spec.cron", "cron.fires", "cron never fires in the next five years"}})
	}
	r.Spec = spec
	if p.Definition != nil {
		r.Definition = *p.Definition
	}
	if p.Input != nil {
		r.Input = p.Input
		if bytes.Equal(bytes.TrimSpace(p.Input), []byte("null")) {
			r.Input = nil
		}
	}
	// The cursor rule (docs/semantics.md#schedule-update): everything due
	// under the old spec has been decided, so the new spec takes over from
	// the update; nothing at or before the cursor is decided again.
	r.Cursor = later(r.Cursor, now)
	return nil
}

// later answers the later of two instants.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Update changes a schedule by compare-and-set on its version
// (docs/semantics.md#schedule-update). Before the change, what is due under
// the current spec is decided and submitted, as a tick would; the change is
// then written only while nothing more is due, and — when it changes the
// definition or the input — while no fire is pending, so that every decided
// fire is submitted with what it was decided with. A schedule that keeps
// firing faster than that is unavailable for the update; retry it.
func (s *Scheduler) Update(ctx context.Context, p UpdateParams) (*View, error) {
	up, err := p.check()
	if err != nil {
		return nil, err
	}
	// Refuse a spec that cannot hold before anything is submitted.
	v, err := s.read(ctx, p.TenantID, p.ScheduleID)
	if err != nil {
		return nil, err
	}
	if err := up.apply(v.rec, s.now()); err != nil {
		return nil, err
	}
	k := key(p.TenantID, p.ScheduleID)
	for range maxRaces {
		if err := s.advance(ctx, k); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		v, err := s.read(ctx, p.TenantID, p.ScheduleID)
		if err != nil {
			return nil, err
		}
		now := s.now()
		due, err := s.decide(ctx, v.rec, now)
		if err != nil {
			return nil, err
		}
		if due || len(v.rec.Pending) > 0 && up.changesSubmissions() {
			continue // fires to submit under what they were decided with first
		}
		if err := up.apply(v.rec, now); err != nil {
			return nil, err
		}
		err = s.save(ctx, v)
		if err == nil {
			return s.view(v.rec, DefaultNextFires), nil
		}
		if !errors.Is(err, errRaced) {
			return nil, err
		}
	}
	return nil, &engine.Error{Code: engine.CodeUnavailable,
		Message: "schedule " + p.ScheduleID + " is deciding or submitting fires; retry the update"}
}
