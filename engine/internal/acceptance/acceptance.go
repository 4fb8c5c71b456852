package acceptance

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// PayloadKey holds an accepted signal's payload
// (docs/semantics.md#accepted-signal-record).
func PayloadKey(runID, name, id string) []byte { return keyspace.SignalPayload.Key(runID, name, id) }

// PayloadPrefix begins the signal payloads of a run.
func PayloadPrefix(runID string) []byte { return keyspace.SignalPayload.KeyPrefix(runID) }

// RecordKey holds the accepted-response record of a signal; an additive
// prefix, so readers of sig: never mistake it for a payload.
func RecordKey(runID, name, id string) []byte { return keyspace.SignalRecord.Key(runID, name, id) }

// RecordPrefix begins the accepted-response records of a run.
func RecordPrefix(runID string) []byte { return keyspace.SignalRecord.KeyPrefix(runID) }

// ExpiryKey indexes accepted-response records by expiry, so retention
// visits only what has expired.
func ExpiryKey(expires time.Time, runID, name, id string) []byte {
	return keyspace.SignalExpiry.Key(store.Time(expires), runID, name, id)
}

// ManualKey holds the result of a manual completion, keyed by its
// idempotency tuple (docs/semantics.md#manual-completion).
func ManualKey(runID, actionID, token string) []byte {
	return keyspace.Manual.Key(runID, actionID, token)
}

// ManualPrefix begins the manual completions of a run.
func ManualPrefix(runID string) []byte { return keyspace.Manual.KeyPrefix(runID) }

// Signal is the canonical AcceptedSignalResult
// (docs/semantics.md#accepted-signal-record).
type Signal struct {
	Accepted         bool      `json:"accepted"`
	RunID            string    `json:"run_id"`
	SignalName       string    `json:"signal_name"`
	SignalID         string    `json:"signal_id"`
	AcceptedAt       time.Time `json:"accepted_at"`
	SignalStorageKey string    `json:"signal_storage_key"`
}

// Record is the persisted accepted-response record
// (docs/semantics.md#accepted-signal-record).
type Record struct {
	FormatVersion    int       `json:"version"`
	RunID            string    `json:"workflow_id"`
	SignalName       string    `json:"signal_name"`
	SignalID         string    `json:"signal_id"`
	SignalStorageKey string    `json:"signal_storage_key"`
	Response         Signal    `json:"response"`
	AcceptedAt       time.Time `json:"accepted_at"`
	ExpiresAt        time.Time `json:"expires_at"`
}

// ErrIndeterminate answers a signal whose payload is stored but whose
// accepted-response record is not (docs/semantics.md#signal-crash-window).
var ErrIndeterminate = errors.New("signal payload stored without its accepted response")

// PriorSignal answers the response of an earlier acceptance of the signal,
// nil when the signal is new, or ErrIndeterminate.
//
// The payload is read first: both records are written in one batch, so once
// the payload is visible an accepted record that is missing is really
// missing, not merely not yet read.
func PriorSignal(ctx context.Context, st store.Store, runID, name, id string) (*Signal, error) {
	_, err := st.Get(ctx, PayloadKey(runID, name, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	item, err := st.Get(ctx, RecordKey(runID, name, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrIndeterminate
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(item.Value, &rec); err != nil {
		return nil, err
	}
	return &rec.Response, nil
}

// PriorManual answers a stored manual completion, or nil.
func PriorManual(ctx context.Context, st store.Store, key []byte) (*runstate.ManualResult, error) {
	item, err := st.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r runstate.ManualResult
	if err := json.Unmarshal(item.Value, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Expired is one accepted-response record whose retention has passed.
type Expired struct {
	IndexKey        []byte
	RunID, Name, ID string
}

// ExpiredAt answers up to 256 index entries expired at now; an entry it
// cannot read is left alone.
func ExpiredAt(ctx context.Context, st store.Store, now time.Time) ([]Expired, error) {
	res, err := st.Scan(ctx, &store.ScanParams{Start: keyspace.SignalExpiry.KeyPrefix(),
		End: keyspace.SignalExpiry.KeyPrefix(store.Time(now.Add(time.Nanosecond))), Limit: 256})
	if err != nil {
		return nil, err
	}
	out := make([]Expired, 0, len(res.Items))
	for _, it := range res.Items {
		parts, err := store.SplitKey(it.Key)
		if err != nil || len(parts) != 5 {
			continue // not ours to judge: leave what we cannot read
		}
		out = append(out, Expired{IndexKey: it.Key, RunID: parts[2], Name: parts[3], ID: parts[4]})
	}
	return out, nil
}
