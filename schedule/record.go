package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// recordVersion is the persisted format of a schedule record
// (docs/persisted-format.md#schedules).
const recordVersion = 1

// record is a schedule as stored under key(tenant, id): its definition, its
// spec and everything it has decided. It is changed only by compare-and-set
// on its version.
type record struct {
	FormatVersion int                   `json:"version"`
	TenantID      string                `json:"tenant_id"`
	ScheduleID    string                `json:"schedule_id"`
	Spec          Spec                  `json:"spec"`
	Definition    definition.Definition `json:"definition"`
	Input         json.RawMessage       `json:"input,omitempty"`
	ProjectID     string                `json:"project_id,omitempty"`
	EnvironmentID string                `json:"environment_id,omitempty"`
	Paused        bool                  `json:"paused,omitempty"`
	CreatedBy     string                `json:"created_by,omitempty"`
	CreatedAt     time.Time             `json:"created_at"`
	// Cursor: every nominal time at or before it has been decided (fired,
	// skipped, buffered or missed).
	Cursor time.Time `json:"cursor"`
	// Pending are fires decided and not yet known to have started a run.
	Pending []fire `json:"pending,omitempty"`
	// Buffered is the fire BUFFER_ONE holds until the previous run ends.
	Buffered  *time.Time `json:"buffered,omitempty"`
	LastFire  time.Time  `json:"last_fire,omitzero"`
	LastRunID string     `json:"last_run_id,omitempty"`
	Fires     uint64     `json:"fires,omitempty"`
	Skipped   uint64     `json:"skipped,omitempty"`
	Missed    uint64     `json:"missed,omitempty"`
	Failed    uint64     `json:"failed,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	// LastFireLag is how late the latest fire the spec decided (not a
	// trigger or a backfill) was recorded after its nominal time; nil until
	// one was.
	LastFireLag *time.Duration `json:"last_fire_lag,omitempty"`
	// Triggers are the latest manual triggers with a request id that started
	// a run, oldest first (at most maxTriggers), so that a retried trigger
	// answers its run without deciding another fire.
	Triggers []triggered `json:"triggers,omitempty"`
}

// maxTriggers bounds the request ids a record remembers.
const maxTriggers = 100

// triggered is a manual trigger's request id and the run it started.
type triggered struct {
	RequestID string `json:"request_id"`
	RunID     string `json:"run_id"`
}

// triggeredRun answers the run a recorded trigger with requestID started, or "".
func (r *record) triggeredRun(requestID string) string {
	for _, t := range r.Triggers {
		if t.RequestID == requestID {
			return t.RunID
		}
	}
	return ""
}

// pendingTrigger answers the pending fire of a trigger with requestID.
func (r *record) pendingTrigger(requestID string) (fire, bool) {
	for _, f := range r.Pending {
		if f.RequestID == requestID && f.Source == engine.TriggerManual {
			return f, true
		}
	}
	return fire{}, false
}

// recordFire records a fire that started (or found) its run.
func (r *record) recordFire(f fire, runID string, now time.Time) {
	r.Fires++
	if !f.Nominal.Before(r.LastFire) {
		r.LastFire, r.LastRunID = f.Nominal, runID
	}
	if f.Source == engine.TriggerSchedule && !f.Backfill {
		lag := max(now.Sub(f.Nominal), 0)
		r.LastFireLag = &lag
	}
	if f.RequestID != "" {
		r.Triggers = append(r.Triggers, triggered{RequestID: f.RequestID, RunID: runID})
		if len(r.Triggers) > maxTriggers {
			r.Triggers = r.Triggers[len(r.Triggers)-maxTriggers:]
		}
	}
}

// counts are a record's counters.
func (r *record) counts() Counts {
	return Counts{Fires: r.Fires, Skipped: r.Skipped, Missed: r.Missed, Failed: r.Failed}
}

// fire is one decided fire: a nominal time and what decided it.
type fire struct {
	Nominal time.Time `json:"nominal"`
	// Source is engine.TriggerSchedule or engine.TriggerManual.
	Source string `json:"source"`
	// Backfill marks a fire a backfill decided.
	Backfill bool `json:"backfill,omitempty"`
	// RequestID is a manual trigger's request id, if it gave one.
	RequestID string `json:"request_id,omitempty"`
}

// runRequestID is the fire's submission id: the schedule id and the nominal
// time (to the millisecond, UTC), so that every process derives the same one;
// a trigger with a request id uses that instead of the time.
func (f fire) runRequestID(scheduleID string) string {
	ts := f.Nominal.UTC().Format("20060102T150405.000Z")
	if f.Source == engine.TriggerManual && f.RequestID != "" {
		return "schedule:" + scheduleID + ":manual:" + f.RequestID
	}
	if f.Source == engine.TriggerManual {
		return "schedule:" + scheduleID + ":manual:" + ts
	}
	return "schedule:" + scheduleID + ":" + ts
}

// key is where a schedule's record lives.
func key(tenant, id string) []byte { return keyspace.Schedule.Key(tenant, id) }

// tenantPrefix begins every schedule of a tenant.
func tenantPrefix(tenant string) []byte { return keyspace.Schedule.KeyPrefix(tenant) }

// allPrefix begins every schedule.
var allPrefix = keyspace.Schedule.KeyPrefix()

// versioned is a record as read, with the version its next write must match.
type versioned struct {
	rec     *record
	version uint64
	// counted are the record's counters as last read or written: what a
	// write adds to them is this process's share (Scheduler.Stats).
	counted Counts
}

// load reads a schedule's record.
func load(ctx context.Context, st store.Store, k []byte) (*versioned, error) {
	item, err := st.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	return decode(item)
}

// decode reads a stored record; a newer format than this build knows is an
// error, never a guess.
func decode(item store.Item) (*versioned, error) {
	var r record
	if err := json.Unmarshal(item.Value, &r); err != nil {
		return nil, fmt.Errorf("schedule record %q: %w", item.Key, err)
	}
	if r.FormatVersion > recordVersion {
		return nil, fmt.Errorf("schedule record %q has format version %d; this weftd reads up to %d", item.Key, r.FormatVersion, recordVersion)
	}
	return &versioned{rec: &r, version: item.Version, counted: r.counts()}, nil
}

// errRaced is a compare-and-set lost to another writer (or a commit whose
// outcome is unknown): read again and decide again.
var errRaced = errors.New("schedule: record changed; read it again")

// save writes the record if it is still at v.version (or absent, for a
// version of 0).
func save(ctx context.Context, st store.Store, v *versioned) error {
	body, err := json.Marshal(v.rec)
	if err != nil {
		return err
	}
	k := key(v.rec.TenantID, v.rec.ScheduleID)
	cond := store.IfAbsent(k)
	if v.version != 0 {
		cond = store.IfVersion(k, v.version)
	}
	b := &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(k, body)}}
	settleRider := store.Ride(ctx, b) // the call's audit record commits with the change
	res, err := st.Commit(ctx, b)
	settleRider(err)
	return settle(err, func() { v.version = res.Versions[0] })
}

// remove deletes the record if it is still at v.version.
func remove(ctx context.Context, st store.Store, v *versioned) error {
	k := key(v.rec.TenantID, v.rec.ScheduleID)
	b := &store.Batch{Conditions: []store.Condition{store.IfVersion(k, v.version)}, Ops: []store.Op{store.Delete(k)}}
	settleRider := store.Ride(ctx, b)
	_, err := st.Commit(ctx, b)
	settleRider(err)
	return settle(err, func() {})
}

// settle turns a commit's error into errRaced where reading again is the
// answer.
func settle(err error, ok func()) error {
	switch {
	case err == nil:
		ok()
		return nil
	case errors.Is(err, store.ErrConditionFailed), errors.Is(err, store.ErrRetryable), errors.Is(err, store.ErrOutcomeUnknown):
		return fmt.Errorf("%w (%w)", errRaced, err)
	default:
		return err
	}
}
