package pollers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// Record is one poller's record, at wk:{tenant}:{queue}:{worker}:{process}:
// what the process that the worker polls knows of it.
type Record struct {
	FormatVersion int       `json:"version"`
	TenantID      string    `json:"tenant_id"`
	Queue         string    `json:"queue"`
	WorkerID      string    `json:"worker_id"`
	Process       string    `json:"process"`
	LastPoll      time.Time `json:"last_poll"`
	Polling       bool      `json:"polling,omitempty"`
	InFlight      int       `json:"in_flight"`
	// Names are the task names the worker asked for ("a:", "c:" and "v:"
	// followed by an activity or compensation), at most 64.
	Names     []string  `json:"names,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Key is a poller's record in one process.
func Key(tenant, queue, worker, process string) []byte {
	return keyspace.Poller.Key(tenant, queue, worker, process)
}

// Prefix begins every poller record: records of processes, not of runs.
func Prefix() []byte { return prefix("", "") }

// prefix begins the poller records of every tenant, of a tenant, or of one
// of its queues.
func prefix(tenant, queue string) []byte {
	switch {
	case tenant != "" && queue != "":
		return keyspace.Poller.KeyPrefix(tenant, queue)
	case tenant != "":
		return keyspace.Poller.KeyPrefix(tenant)
	}
	return keyspace.Poller.KeyPrefix()
}

// Ref names one queue of one tenant.
type Ref struct{ Tenant, Queue string }

// Info is one worker polling one queue, as the engine's API says it.
type Info struct {
	WorkerID string
	// LastPoll is when the worker last began or ended a poll of the queue.
	LastPoll time.Time
	// Polling is true while one of its polls is open.
	Polling bool
	// InFlight counts the tasks handed to it and not yet reported.
	InFlight int
	// Activities and Compensations are what it asked for (at most 64 names
	// in all); Verifiable are the activities it can verify.
	Activities, Compensations, Verifiable []string
}

// Live answers the unexpired records of a tenant's queue — of every queue
// when queue is "", of every tenant when tenant is also "" — other than
// process self's, up to about limit. A record it cannot read, or of a
// format newer than version, is refused, not guessed at.
func Live(ctx context.Context, st store.Store, tenant, queue, self string, version int, now time.Time, limit int) ([]Record, error) {
	var recs []Record
	for after := []byte(nil); ; {
		res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefix(tenant, queue), After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			var r Record
			if json.Unmarshal(it.Value, &r) != nil || r.FormatVersion > version || r.Process == self || !r.ExpiresAt.After(now) {
				continue // unreadable, a newer weftd's, this process's own or expired
			}
			recs = append(recs, r)
		}
		if res.Next == nil || len(recs) >= limit {
			return recs, nil
		}
		after = res.Next
	}
}

// Merge merges the records of one worker in several processes — its latest
// poll, the sum of its tasks, the union of its names — and answers each
// queue's workers by worker id.
func Merge(recs []Record) map[Ref][]Info {
	type key struct {
		Ref
		worker string
	}
	merged := map[key]*Record{}
	for i := range recs {
		r := &recs[i]
		k := key{Ref{r.TenantID, r.Queue}, r.WorkerID}
		m := merged[k]
		if m == nil {
			merged[k] = r
			continue
		}
		if r.LastPoll.After(m.LastPoll) {
			m.LastPoll = r.LastPoll
		}
		m.Polling = m.Polling || r.Polling
		m.InFlight += r.InFlight
		m.Names = append(m.Names, r.Names...)
	}
	out := map[Ref][]Info{}
	for k, r := range merged {
		out[k.Ref] = append(out[k.Ref], info(r))
	}
	for _, ps := range out {
		slices.SortFunc(ps, func(a, b Info) int { return strings.Compare(a.WorkerID, b.WorkerID) })
	}
	return out
}

// info answers a merged record as the API says it.
func info(r *Record) Info {
	p := Info{WorkerID: r.WorkerID, LastPoll: r.LastPoll, Polling: r.Polling, InFlight: r.InFlight,
		Activities: []string{}, Compensations: []string{}, Verifiable: []string{}}
	names := slices.Clone(r.Names)
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		switch kind, name, _ := strings.Cut(n, ":"); kind {
		case "a":
			p.Activities = append(p.Activities, name)
		case "c":
			p.Compensations = append(p.Compensations, name)
		case "v":
			p.Verifiable = append(p.Verifiable, name)
		}
	}
	return p
}

// SortRefs sorts queue references by tenant and queue, without duplicates.
func SortRefs(refs []Ref) []Ref {
	slices.SortFunc(refs, func(a, b Ref) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Queue, b.Queue))
	})
	return slices.Compact(refs)
}

// Sweep deletes the expired poller records of every process. A record
// refreshed meanwhile is kept: each delete is conditioned on the version
// read, where the store can. A record of a format newer than version is a
// newer weftd's to sweep.
func Sweep(ctx context.Context, st store.Store, version int, now time.Time) error {
	cas := st.Capabilities().ConditionalBatch
	var errs []error
	for after := []byte(nil); ; {
		res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefix("", ""), After: after, Limit: 1000})
		if err != nil {
			return err
		}
		for _, it := range res.Items {
			var r Record
			if json.Unmarshal(it.Value, &r) == nil && (r.ExpiresAt.After(now) || r.FormatVersion > version) {
				continue // live, or a newer weftd's to sweep
			}
			b := &store.Batch{Ops: []store.Op{store.Delete(it.Key)}}
			if cas {
				b.Conditions = []store.Condition{store.IfVersion(it.Key, it.Version)}
			}
			var cf *store.ConditionFailedError
			if _, err := st.Commit(ctx, b); err != nil && !errors.As(err, &cf) {
				errs = append(errs, err)
			}
		}
		if res.Next == nil {
			return errors.Join(errs...)
		}
		after = res.Next
	}
}
