package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// recordVersion is the persisted format of a batch record and of its runs
// (docs/persisted-format.md).
const recordVersion = 1

// Operation is what a batch does to each of its runs.
type Operation string

// The operations.
const (
	OpCancel    Operation = "cancel"
	OpPause     Operation = "pause"
	OpResume    Operation = "resume"
	OpRerunFrom Operation = "rerun_from"
	OpRetryStep Operation = "retry_step"
	OpSignal    Operation = "signal"
	OpDelete    Operation = "delete"
)

// State is where a batch is.
type State string

// The states.
const (
	StateRunning   State = "RUNNING"
	StateCompleted State = "COMPLETED"
	StateCancelled State = "CANCELLED"
)

// Outcome is how the operation went on one run ("" while not acted on).
type Outcome string

// The outcomes.
const (
	OutcomeSucceeded Outcome = "SUCCEEDED"
	OutcomeFailed    Outcome = "FAILED"
	OutcomeSkipped   Outcome = "SKIPPED"
)

// record is a batch as stored under key(tenant, id), changed only by
// compare-and-set on its version.
type record struct {
	FormatVersion int       `json:"version"`
	TenantID      string    `json:"tenant_id"`
	BatchID       string    `json:"batch_id"`
	Operation     Operation `json:"operation"`
	Args
	Query string  `json:"query,omitempty"`
	Rate  float64 `json:"rate"`
	// Total is the selection's size; Nonce names it (runKey).
	Total int    `json:"total"`
	Nonce string `json:"nonce"`
	// Next: every run before it in the selection was acted on.
	Next      int       `json:"next"`
	Succeeded int       `json:"succeeded,omitempty"`
	Failed    int       `json:"failed,omitempty"`
	Skipped   int       `json:"skipped,omitempty"`
	State     State     `json:"state"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Owner is the weftd process driving the batch until LeaseUntil.
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// NextAt is the earliest time the next run may be acted on (the rate).
	NextAt time.Time `json:"next_at,omitzero"`
}

// Args are an operation's arguments.
type Args struct {
	// FromStep, for OpRerunFrom.
	FromStep string `json:"from_step,omitempty"`
	// ActionID, for OpRetryStep.
	ActionID string `json:"action_id,omitempty"`
	// SignalName and Payload, for OpSignal.
	SignalName string          `json:"signal_name,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	// Reason is recorded with each control signal.
	Reason string `json:"reason,omitempty"`
	// Compensate, for OpCancel.
	Compensate bool `json:"compensate,omitempty"`
}

// member is one run of a batch as stored under runKey.
type member struct {
	FormatVersion int       `json:"version"`
	RunID         string    `json:"run_id"`
	Outcome       Outcome   `json:"outcome,omitempty"`
	Code          string    `json:"code,omitempty"`
	Message       string    `json:"message,omitempty"`
	At            time.Time `json:"at,omitzero"`
	// Attempted: a delete was sent, so a run found gone was deleted.
	Attempted bool `json:"attempted,omitempty"`
}

// key is where a batch's record lives.
func key(tenant, id string) []byte { return keyspace.Batch.Key(tenant, id) }

// activeKey indexes a running batch.
func activeKey(tenant, id string) []byte { return keyspace.BatchActive.Key(tenant, id) }

// runKey is where the i-th run of a batch's selection lives.
func runKey(r *record, i int) []byte {
	return keyspace.BatchRun.Key(r.TenantID, r.BatchID, r.Nonce, fmt.Sprintf("%010d", i))
}

// runsPrefix begins every run of a batch's selection.
func runsPrefix(r *record) []byte { return keyspace.BatchRun.KeyPrefix(r.TenantID, r.BatchID, r.Nonce) }

// versioned is a record as read, with the version its next write must match.
type versioned struct {
	rec     *record
	version uint64
}

// load reads a batch's record.
func load(ctx context.Context, st store.Store, k []byte) (*versioned, error) {
	item, err := st.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(item.Value, &r); err != nil {
		return nil, fmt.Errorf("batch record %q: %w", item.Key, err)
	}
	if r.FormatVersion > recordVersion {
		return nil, fmt.Errorf("batch record %q has format version %d; this weftd reads up to %d", item.Key, r.FormatVersion, recordVersion)
	}
	return &versioned{rec: &r, version: item.Version}, nil
}

// loadMember reads the i-th run of a batch.
func loadMember(ctx context.Context, st store.Store, r *record, i int) (*member, error) {
	item, err := st.Get(ctx, runKey(r, i))
	if err != nil {
		return nil, err
	}
	var m member
	if err := json.Unmarshal(item.Value, &m); err != nil {
		return nil, fmt.Errorf("batch run %q: %w", item.Key, err)
	}
	return &m, nil
}

// errRaced is a compare-and-set lost to another writer (another weftd took
// the batch, or it was cancelled): read it again.
var errRaced = errors.New("batch: record changed; read it again")

// save writes the record if it is still at v.version (absent, for 0), with
// extra ops in the same batch.
func save(ctx context.Context, st store.Store, v *versioned, extra ...store.Op) error {
	body, err := json.Marshal(v.rec)
	if err != nil {
		return err
	}
	k := key(v.rec.TenantID, v.rec.BatchID)
	cond := store.IfAbsent(k)
	if v.version != 0 {
		cond = store.IfVersion(k, v.version)
	}
	b := &store.Batch{Conditions: []store.Condition{cond}, Ops: append([]store.Op{store.Put(k, body)}, extra...)}
	settleRider := store.Ride(ctx, b) // the call's audit record commits with the change
	res, err := st.Commit(ctx, b)
	settleRider(err)
	var cf *store.ConditionFailedError
	switch {
	case err == nil:
		v.version = res.Versions[0]
		return nil
	case errors.As(err, &cf), errors.Is(err, store.ErrOutcomeUnknown):
		return errRaced
	}
	return err
}

// putMember answers the op that writes a run of the batch.
func putMember(r *record, i int, m *member) (store.Op, error) {
	m.FormatVersion = recordVersion
	body, err := json.Marshal(m)
	if err != nil {
		return store.Op{}, err
	}
	return store.Put(runKey(r, i), body), nil
}
