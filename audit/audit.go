// Package audit keeps the audit log: one record of every mutating call to
// the API, allowed or denied — who (principal and how they authenticated),
// what (procedure and permission), on which target, when, the outcome and
// the correlation id; never a payload.
//
// An allowed call's record commits in the same batch as the call's action
// ([Log.Rider], a [store.Rider] the engine's decision and the scheduler's
// record writes carry), with outcome "ok": a process that stops after that
// batch keeps both, one that stops before it keeps neither, and the record
// cannot claim an action that did not commit. A call that committed no
// action (refused by the rules, failed before its commit, or one that
// changes nothing, such as a repeated signal) is recorded after it
// answers, with its outcome, by [Log.Settle], and only if its batch did not
// already carry the record (an unknown outcome that in fact committed). A
// denied call is one record ([Log.Append]). Records are kept per tenant,
// newest first, and removed after the retention.
//
// Layering: it imports store, engine/keyspace (its key prefix) and the
// standard library only; the server imports it, the engine never does.
package audit

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// Record is one audited call.
type Record struct {
	ID            string    `json:"id"`
	Time          time.Time `json:"time"`
	Tenant        string    `json:"tenant"`
	Principal     string    `json:"principal"`
	AuthMethod    string    `json:"auth_method"`
	Procedure     string    `json:"procedure"`
	Permission    string    `json:"permission"`
	Target        string    `json:"target,omitempty"`
	Outcome       string    `json:"outcome"`
	CorrelationID string    `json:"correlation_id,omitempty"`
}

// OutcomeOK is the outcome of a call that answered without a fault, and
// of one whose action committed.
const OutcomeOK = "ok"

// Log writes and reads audit records in a store.
type Log struct {
	st  store.Store
	now func() time.Time
}

// New answers the audit log kept in st; now is the clock (nil: time.Now).
// st must be the store the engine and the scheduler commit to, so that a
// record can ride an action's batch.
func New(st store.Store, now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{st: st, now: now}
}

// keyOf answers a record's key: the tenant's prefix, then the time inverted
// so that an ascending scan reads newest first, then the id.
func keyOf(tenant string, at time.Time, id string) []byte {
	var inv [8]byte
	binary.BigEndian.PutUint64(inv[:], math.MaxUint64-uint64(at.UnixNano()))
	return keyspace.Audit.Key(tenant, hex.EncodeToString(inv[:]), id)
}

// Rider answers the rider that carries rec's record, with outcome "ok",
// in the batch of the call's action (store.WithRider). rec's ID and Time
// are set here.
func (l *Log) Rider(rec Record) *Rider {
	rec.ID, rec.Time, rec.Outcome = newID(), l.now().UTC(), OutcomeOK
	return &Rider{rec: rec}
}

// Settle records the call of r's record with its outcome unless a batch
// already carried the record: after a call that committed no action. It
// writes the record only if absent, so a record an unknown outcome in fact
// committed is kept as it is.
func (l *Log) Settle(ctx context.Context, r *Rider, outcome string) error {
	if r.Committed() {
		return nil
	}
	rec := r.rec
	rec.Outcome = outcome
	op, err := opOf(rec)
	if err != nil {
		return err
	}
	_, err = l.st.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(op.Key)}, Ops: []store.Op{op}})
	if errors.Is(err, store.ErrConditionFailed) {
		return nil // the action's batch carried it after all
	}
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	return nil
}

// Append records a call that did not run (a denied one) with its outcome.
func (l *Log) Append(ctx context.Context, rec Record) error {
	rec.ID, rec.Time = newID(), l.now().UTC()
	op, err := opOf(rec)
	if err != nil {
		return err
	}
	if _, err := l.st.Commit(ctx, &store.Batch{Ops: []store.Op{op}}); err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	return nil
}

func opOf(rec Record) (store.Op, error) {
	value, err := json.Marshal(rec)
	if err != nil {
		return store.Op{}, fmt.Errorf("audit record: %w", err)
	}
	return store.Put(keyOf(rec.Tenant, rec.Time, rec.ID), value), nil
}

// Rider carries one call's audit record into the batch of its action
// (store.Rider): the first batch committed under the call's context that
// offers to carry it, and no other once that one committed. A call whose
// action is several batches (a schedule's trigger: the run, then the
// schedule's record) is recorded by the first.
type Rider struct {
	rec Record
	mu  sync.Mutex
	// riding: a batch carrying the record is in flight; done: one committed.
	riding, done bool
}

// Ops implements store.Rider.
func (r *Rider) Ops() []store.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.riding || r.done {
		return nil
	}
	op, err := opOf(r.rec)
	if err != nil {
		return nil // a record of strings always marshals; Settle reports it
	}
	r.riding = true
	return []store.Op{op}
}

// Settle implements store.Rider.
func (r *Rider) Settle(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.riding, r.done = false, r.done || err == nil
}

// Committed reports whether a batch carrying the record committed.
func (r *Rider) Committed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// On answers ctx carrying the rider (store.WithRider): the call's action
// committed under it carries the record.
func (r *Rider) On(ctx context.Context) context.Context { return store.WithRider(ctx, r) }

// Record answers the record the rider carries (outcome "ok").
func (r *Rider) Record() Record { return r.rec }

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Filter keeps the records every set field matches.
type Filter struct {
	Principal, Procedure, Target, Outcome string
	// Since (inclusive) and Until (exclusive) bound the time; zero: open.
	Since, Until time.Time
}

func (f Filter) keeps(r Record) bool {
	return (f.Principal == "" || r.Principal == f.Principal) &&
		(f.Procedure == "" || r.Procedure == f.Procedure) &&
		(f.Target == "" || r.Target == f.Target) &&
		(f.Outcome == "" || r.Outcome == f.Outcome) &&
		(f.Since.IsZero() || !r.Time.Before(f.Since)) &&
		(f.Until.IsZero() || r.Time.Before(f.Until))
}

// ListParams selects one page of a tenant's records.
type ListParams struct {
	Tenant string
	Filter Filter
	// Limit is the most records answered (1 to 1000).
	Limit int
	// After resumes from a previous page's Next.
	After []byte
}

// ListResult is one page, newest first; Next is nil on the last page.
type ListResult struct {
	Records []Record
	Next    []byte
}

// maxScanned bounds the records one List call reads while filtering, so a
// filter matching nothing cannot make one call read the whole log.
const maxScanned = 10000

// List answers a page of the tenant's records that the filter keeps.
func (l *Log) List(ctx context.Context, p ListParams) (ListResult, error) {
	if p.Limit < 1 || p.Limit > 1000 {
		return ListResult{}, fmt.Errorf("audit page size must be from 1 to 1000, got %d", p.Limit)
	}
	prefix := keyspace.Audit.KeyPrefix(p.Tenant)
	if !p.Filter.Until.IsZero() && p.After == nil {
		p.After = keyOf(p.Tenant, p.Filter.Until, "") // records before Until start just after it
	}
	var out ListResult
	after, scanned := p.After, 0
	for scanned < maxScanned {
		page, err := l.st.Scan(ctx, &store.ScanParams{Prefix: prefix, After: after, Limit: 256})
		if err != nil {
			return ListResult{}, fmt.Errorf("audit log: %w", err)
		}
		for _, it := range page.Items {
			scanned++
			var r Record
			if err := json.Unmarshal(it.Value, &r); err != nil {
				return ListResult{}, errors.New("audit log: a record is not readable")
			}
			if !p.Filter.Since.IsZero() && r.Time.Before(p.Filter.Since) {
				return out, nil // older records follow: none can match
			}
			if p.Filter.keeps(r) {
				out.Records = append(out.Records, r)
				if len(out.Records) == p.Limit {
					out.Next = it.Key
					return out, nil
				}
			}
			after = it.Key
		}
		if page.Next == nil {
			return out, nil
		}
	}
	out.Next = after
	return out, nil
}

// Sweep removes every record older than before, of every tenant, in
// batches; it answers how many it removed.
func (l *Log) Sweep(ctx context.Context, before time.Time) (int, error) {
	prefix := keyspace.Audit.KeyPrefix()
	removed := 0
	var after []byte
	for {
		page, err := l.st.Scan(ctx, &store.ScanParams{Prefix: prefix, After: after, Limit: 256})
		if err != nil {
			return removed, fmt.Errorf("audit sweep: %w", err)
		}
		var ops []store.Op
		for _, it := range page.Items {
			var r Record
			if json.Unmarshal(it.Value, &r) == nil && r.Time.Before(before) {
				ops = append(ops, store.Delete(it.Key))
			}
			after = it.Key
		}
		if len(ops) > 0 {
			if _, err := l.st.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
				return removed, fmt.Errorf("audit sweep: %w", err)
			}
			removed += len(ops)
		}
		if page.Next == nil {
			return removed, nil
		}
	}
}
