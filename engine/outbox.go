package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The transactional outbox (docs/semantics.md#outbox). A decision that
// appends an event writes, in the same batch, an entry ob:{run}:{run_seq}
// that refers to the event instead of copying it (runcodec's outbox
// reference: the run's tenant); the export worker resolves a page of
// entries with ResolveOutbox, publishes, and deletes them. Entries an older
// weftd wrote hold a copy of the event as JSON (OutboxEntry) and resolve
// from it.

// OutboxPrefix is the key prefix of the transactional outbox, for export workers.
func OutboxPrefix() []byte { return store.KeyPrefix("ob") }

// OutboxEntry is the outbox entry an older weftd wrote: the event's JSON,
// copied, with the tenant it belongs to (buses partition by tenant).
type OutboxEntry struct {
	TenantID string          `json:"tenant_id"`
	Event    json.RawMessage `json:"event"`
}

// OutboxEvent is an outbox entry resolved to what a bus carries.
type OutboxEvent struct {
	TenantID  string
	EventID   string
	RunID     string
	RunSeq    uint64
	EventType string
	// Event is the event's JSON (runstate.Event's encoding): made from the
	// stored event, or, for an older entry, its copy byte for byte.
	Event json.RawMessage
	// Err, when set, says why the entry could not be resolved (a poison
	// entry); the other fields are then empty.
	Err error
}

// ResolveOutbox resolves outbox entries, in order: the events the
// references name are read in one call (store.GetMany), the older entries
// decode from their copy. An entry that cannot be resolved — undecodable,
// or naming an event that is not there — answers its Err; an error reading
// the store fails the whole call.
func ResolveOutbox(ctx context.Context, st store.Store, entries []store.Item) ([]OutboxEvent, error) {
	out := make([]OutboxEvent, len(entries))
	var keys [][]byte
	for i, it := range entries {
		if !runcodec.IsOutboxRef(it.Value) {
			out[i] = resolveCopy(it.Value)
			continue
		}
		key, err := referredEvent(it.Key)
		if err != nil {
			out[i].Err = err
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return out, nil
	}
	found, err := store.GetMany(ctx, st, keys)
	if err != nil {
		return nil, fmt.Errorf("read the events of %d outbox entries: %w", len(keys), err)
	}
	events := make(map[string][]byte, len(found))
	for _, it := range found {
		events[string(it.Key)] = it.Value
	}
	for i, it := range entries {
		if !runcodec.IsOutboxRef(it.Value) || out[i].Err != nil {
			continue
		}
		out[i] = resolveRef(it, events)
	}
	return out, nil
}

// referredEvent answers the key of the event an outbox key refers to.
func referredEvent(obKey []byte) ([]byte, error) {
	parts, err := store.SplitKey(obKey)
	if err != nil || len(parts) != 3 || parts[0] != "ob" {
		return nil, errors.New("outbox key is not ob:{run}:{run_seq}")
	}
	seq, err := store.ParseUint64(parts[2])
	if err != nil {
		return nil, errors.New("outbox key's run_seq is not a number")
	}
	return eventKey(parts[1], seq), nil
}

func resolveRef(it store.Item, events map[string][]byte) OutboxEvent {
	tenant, err := runcodec.DecodeOutboxRef(it.Value)
	if err != nil {
		return OutboxEvent{Err: err}
	}
	key, _ := referredEvent(it.Key) // parsed once already
	body, ok := events[string(key)]
	if !ok {
		return OutboxEvent{Err: errors.New("outbox entry refers to an event that is not stored")}
	}
	var ev runstate.Event
	if err := runcodec.DecodeEvent(body, &ev); err != nil {
		return OutboxEvent{Err: fmt.Errorf("outbox entry's event: %w", err)}
	}
	js, err := json.Marshal(&ev)
	if err != nil {
		return OutboxEvent{Err: fmt.Errorf("outbox entry's event as JSON: %w", err)}
	}
	return checkEnvelope(OutboxEvent{TenantID: tenant, EventID: ev.ID, RunID: ev.RunID, RunSeq: ev.Seq, EventType: ev.Type, Event: js})
}

// resolveCopy decodes an older entry, which holds the event's JSON.
func resolveCopy(value []byte) OutboxEvent {
	var entry OutboxEntry
	if err := json.Unmarshal(value, &entry); err != nil {
		return OutboxEvent{Err: fmt.Errorf("outbox entry is not JSON: %w", err)}
	}
	var env struct {
		EventID   string `json:"event_id"`
		RunID     string `json:"run_id"`
		RunSeq    uint64 `json:"run_seq"`
		EventType string `json:"event_type"`
	}
	if err := json.Unmarshal(entry.Event, &env); err != nil {
		return OutboxEvent{Err: fmt.Errorf("outbox entry's event is not an event: %w", err)}
	}
	return checkEnvelope(OutboxEvent{TenantID: entry.TenantID, EventID: env.EventID, RunID: env.RunID, RunSeq: env.RunSeq,
		EventType: env.EventType, Event: entry.Event})
}

// checkEnvelope refuses an event without what consumers deduplicate and
// route by.
func checkEnvelope(e OutboxEvent) OutboxEvent {
	if e.EventID == "" || e.RunID == "" || e.RunSeq == 0 || e.EventType == "" {
		return OutboxEvent{Err: errors.New("outbox entry's event lacks event_id, run_id, run_seq or event_type")}
	}
	return e
}
