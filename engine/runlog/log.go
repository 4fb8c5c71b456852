package runlog

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// EventKey holds one event; run_seq sorts numerically.
func EventKey(runID string, seq uint64) []byte {
	return keyspace.Run.Key(runID, "ev", store.Uint64(seq))
}

// EventKeyRun answers the run an event record's key (EventKey) names;
// empty for a key that is not one.
func EventKeyRun(key []byte) string {
	parts, err := store.SplitKey(key)
	if err != nil || len(parts) != 4 || parts[0] != keyspace.Run.Name || parts[2] != "ev" || parts[3] == "" {
		return ""
	}
	return parts[1]
}

// EventPrefix is the prefix of every event of a run.
func EventPrefix(runID string) []byte { return keyspace.Run.KeyPrefix(runID, "ev") }

// idemKey enforces (run_id, idempotency_key) uniqueness.
func idemKey(runID, key string) []byte { return keyspace.Run.Key(runID, "ek", key) }

// IdemPrefix is the prefix of every idempotency key's row of a run.
func IdemPrefix(runID string) []byte { return keyspace.Run.KeyPrefix(runID, "ek") }

// CheckpointKey holds a run's checkpoint (runstate.State).
func CheckpointKey(runID string) []byte { return keyspace.Run.Key(runID, "ckpt") }

// PutCheckpoint writes a run's checkpoint.
func PutCheckpoint(runID string, s *runstate.State) store.Op {
	return PutCheckpointAt(CheckpointKey(runID), s)
}

// PutCheckpointAt writes a checkpoint at key, the run's CheckpointKey (a
// decision's batch builds it once for its condition and its write).
func PutCheckpointAt(key []byte, s *runstate.State) store.Op {
	return PutCheckpointIn(nil, key, s)
}

// PutCheckpointIn is PutCheckpointAt encoding the checkpoint into buf's
// memory (from its start) when it has room, else into new memory.
func PutCheckpointIn(buf, key []byte, s *runstate.State) store.Op {
	buf = slices.Grow(buf[:0], 128+192*len(s.Steps))
	return store.Put(key, runcodec.AppendState(buf, s))
}

// DecodeCheckpoint decodes a stored checkpoint.
func DecodeCheckpoint(runID string, b []byte) (*runstate.State, error) {
	var s runstate.State
	if err := runcodec.DecodeState(b, &s); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", runID, err)
	}
	return &s, nil
}

// AppendEvents adds a decision's events to its batch: one record holding
// them (runcodec.AppendEventGroup: the event itself when there is one) at
// the run_seq of the last, for each run of consecutive run_seqs among them
// (a decision's are consecutive; any gap starts a record of its own); with
// keyRows, each event's idempotency key's row on an absent-condition — for
// a run whose checkpoint does not record the keys itself
// (runstate.State.KeysTracked; docs/semantics.md#event-idempotency-key);
// and, as outbox says, the run's outbox entry for the export worker
// (docs/semantics.md#outbox): put from the first of events on when the
// run has none, on condition that it still has none; or, when it has one,
// the condition that it still has, and no write (the entry names the run's
// events through its last). It answers where in b it put them (Appended),
// for the outbox cache to note once b commits.
func AppendEvents(b *store.Batch, tenantID string, events []runstate.Event, outbox OutboxWrite, keyRows bool) Appended {
	appended := Appended{tenantID: tenantID, events: events, at: len(b.Ops), outbox: outbox}
	// The records' values share one buffer, each capped at its own length.
	buf := make([]byte, 0, 280*len(events))
	if outbox != NoOutbox && len(events) > 1 { // a group's, which the outbox cache would rebuild
		appended.forms = &runcodec.EventForms{Buf: make([]byte, 0, 256*len(events)), Ends: make([]int, 0, len(events))}
	}
	for first := 0; first < len(events); {
		last := entryEnd(events, first)
		start := len(buf)
		run := events[last].RunID // the run its key names
		if appended.forms != nil {
			buf = runcodec.AppendEventGroupForms(buf, run, events[first:last+1], appended.forms)
		} else {
			buf = runcodec.AppendEventGroup(buf, run, events[first:last+1])
		}
		value := buf[start:len(buf):len(buf)]
		b.Ops = append(b.Ops, store.Put(EventKey(run, events[last].Seq), value))
		first = last + 1
	}
	appended.records = len(b.Ops) - appended.at
	if keyRows {
		for i := range events {
			ev := &events[i]
			idem := idemKey(ev.RunID, ev.IdempotencyKey)
			var be [8]byte
			binary.BigEndian.PutUint64(be[:], ev.Seq)
			start := len(buf)
			buf = hex.AppendEncode(buf, be[:]) // store.Uint64(ev.Seq), without its string
			seq := buf[start:len(buf):len(buf)]
			b.Conditions = append(b.Conditions, store.IfAbsent(idem))
			b.Ops = append(b.Ops, store.Put(idem, seq))
		}
	}
	if len(events) == 0 {
		return appended
	}
	key := RunOutboxKey(events[0].RunID)
	switch outbox {
	case OutboxPut:
		b.Conditions = append(b.Conditions, store.IfAbsent(key))
		b.Ops = append(b.Ops, store.Put(key, runcodec.AppendOutboxRun(nil, runcodec.OutboxRun{TenantID: tenantID, From: events[0].Seq})))
	case OutboxKept:
		b.Conditions = append(b.Conditions, store.IfPresent(key))
	}
	return appended
}

// entryEnd answers the index of the last of events that the record
// starting at events[first] holds: a decision's events have consecutive
// run_seqs, and any gap starts a record of its own.
func entryEnd(events []runstate.Event, first int) int {
	last := first
	for last+1 < len(events) && events[last+1].Seq == events[last].Seq+1 {
		last++
	}
	return last
}

// Appended is where AppendEvents put a decision's events in its batch:
// from Ops[at], records puts, one per run of consecutive run_seqs
// (entryEnd), and what it did with the run's outbox entry; with an outbox
// and more than one event, the events' stored forms too, made while they
// were encoded. OutboxCache.Committed reads the committed batch through it.
type Appended struct {
	tenantID    string
	events      []runstate.Event
	at, records int
	outbox      OutboxWrite
	// forms, when not nil, are the events' stored forms (FormatEvent), as
	// EachStoredEvent would answer them from the records.
	forms *runcodec.EventForms
}

// EventWrites answers how many writes AppendEvents adds to a batch for
// events, with the same outbox and keyRows, and how many conditions: one
// per event with keyRows, and one for the outbox entry.
func EventWrites(events []runstate.Event, outbox OutboxWrite, keyRows bool) (writes, conds int) {
	for first := 0; first < len(events); first = entryEnd(events, first) + 1 {
		writes++
	}
	if keyRows {
		writes += len(events)
		conds += len(events)
	}
	if len(events) > 0 && outbox != NoOutbox {
		conds++
		if outbox == OutboxPut {
			writes++
		}
	}
	return writes, conds
}

// ReadEvents answers up to limit of a run's events after the watermark
// after, in run_seq order, and whether more follow. A record is keyed by
// the run_seq of its last event, so the first record after the
// watermark's key holds the first event after it; the events of a record
// at or before the watermark are skipped.
func ReadEvents(ctx context.Context, st store.Store, runID string, after uint64, limit int) ([]runstate.Event, bool, error) {
	if limit <= 0 {
		limit = 1
	}
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: EventPrefix(runID), After: EventKey(runID, after), Limit: limit})
	if err != nil {
		return nil, false, err
	}
	events := make([]runstate.Event, 0, len(res.Items))
	more := res.Next != nil
	for i, it := range res.Items {
		from := len(events)
		events, err = runcodec.DecodeEvents(it.Value, runID, events)
		if err != nil {
			return nil, false, errors.Join(errors.New("undecodable event in run "+runID), err)
		}
		kept := from
		for _, ev := range events[from:] {
			if ev.Seq > after {
				events[kept] = ev
				kept++
			}
		}
		events = events[:kept]
		if len(events) >= limit {
			more = more || len(events) > limit || i < len(res.Items)-1
			events = events[:limit]
			break
		}
	}
	return events, more, nil
}
