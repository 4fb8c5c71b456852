package schedule

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Counts are a schedule's counters: fires that started (or found) a run,
// fires skipped by the overlap policy, nominal times missed after downtime,
// and fires refused for good.
type Counts struct {
	Fires, Skipped, Missed, Failed uint64
}

// since answers what c added to an earlier reading; a counter that went down
// (the schedule was deleted and created again) adds nothing.
func (c Counts) since(before Counts) Counts {
	sub := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return Counts{Fires: sub(c.Fires, before.Fires), Skipped: sub(c.Skipped, before.Skipped),
		Missed: sub(c.Missed, before.Missed), Failed: sub(c.Failed, before.Failed)}
}

func (c Counts) plus(o Counts) Counts {
	return Counts{Fires: c.Fires + o.Fires, Skipped: c.Skipped + o.Skipped, Missed: c.Missed + o.Missed, Failed: c.Failed + o.Failed}
}

// Stat is one schedule's metrics as one process sees them.
type Stat struct {
	TenantID, ScheduleID string
	// Counts are the decisions this process recorded since it started: each
	// is recorded by exactly one process (the compare-and-set that wrote it),
	// so the sum over every weftd is the schedule's.
	Counts Counts
	// LastFireLag is the record's as last read: how late its latest fire the
	// spec decided was submitted after its nominal time. HasLag is false
	// until one was, and once the schedule is gone.
	LastFireLag time.Duration
	HasLag      bool
}

// stats are a scheduler's per-schedule metrics, keyed by record key.
type stats struct {
	mu   sync.Mutex
	byID map[string]*Stat
}

func newStats() *stats { return &stats{byID: map[string]*Stat{}} }

// entryLocked answers a record's entry, made on first use.
func (st *stats) entryLocked(r *record) *Stat {
	k := string(key(r.TenantID, r.ScheduleID))
	e := st.byID[k]
	if e == nil {
		e = &Stat{TenantID: r.TenantID, ScheduleID: r.ScheduleID}
		st.byID[k] = e
	}
	return e
}

// written counts what a successful write of v added to its counters, and
// notes its lag.
func (st *stats) written(v *versioned) {
	now := v.rec.counts()
	added := now.since(v.counted)
	v.counted = now
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.entryLocked(v.rec)
	e.Counts = e.Counts.plus(added)
	e.noteLag(v.rec)
}

// seen notes the lag of a record as read.
func (st *stats) seen(r *record) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.entryLocked(r).noteLag(r)
}

func (e *Stat) noteLag(r *record) {
	e.HasLag = r.LastFireLag != nil
	if e.HasLag {
		e.LastFireLag = *r.LastFireLag
	}
}

// keep forgets the lag of every schedule a full scan did not find (deleted,
// perhaps by another process); its counters stay, as counters do.
func (st *stats) keep(found map[string]bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, e := range st.byID {
		if !found[k] {
			e.HasLag = false
		}
	}
}

// forget drops a deleted schedule's lag.
func (st *stats) forget(k []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if e := st.byID[string(k)]; e != nil {
		e.HasLag = false
	}
}

// Stats answers every schedule's metrics as this process knows them (each
// schedule it has ticked or written since it started), by tenant and
// schedule id; weftd serves them on /metrics
// (docs/operations.md#schedule-metrics).
func (s *Scheduler) Stats() []Stat {
	st := s.stats
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]Stat, 0, len(st.byID))
	for _, e := range st.byID {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Stat) int {
		return cmp.Or(cmp.Compare(a.TenantID, b.TenantID), cmp.Compare(a.ScheduleID, b.ScheduleID))
	})
	return out
}
