package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/store"
)

// The export worker's own records. Both mirror the outbox key: the outbox
// entry ob:{run}:{run_seq} has its retry record at obr:{run}:{run_seq} and its
// dead-letter record at dlq:{run}:{run_seq} (the part after the prefix is
// copied byte for byte, so even a malformed outbox key maps one to one).

// RetryPrefix is the key prefix of retry records.
func RetryPrefix() []byte { return keyspace.OutboxRetry.KeyPrefix() }

// DeadLetterPrefix is the key prefix of dead-letter records.
func DeadLetterPrefix() []byte { return keyspace.DeadLetter.KeyPrefix() }

// OutboxKey answers the outbox key of an event (as the engine writes it).
func OutboxKey(runID string, runSeq uint64) []byte {
	return keyspace.Outbox.Key(runID, store.Uint64(runSeq))
}

// DeadLetterKey answers the dead-letter key of an event.
func DeadLetterKey(runID string, runSeq uint64) []byte {
	return keyspace.DeadLetter.Key(runID, store.Uint64(runSeq))
}

// RetryKey answers the retry-record key of an event.
func RetryKey(runID string, runSeq uint64) []byte {
	return keyspace.OutboxRetry.Key(runID, store.Uint64(runSeq))
}

// rekey moves key from prefix from to prefix to.
func rekey(key, from, to []byte) []byte {
	return append(bytes.Clone(to), bytes.TrimPrefix(key, from)...)
}

func retryKeyOf(outboxKey []byte) []byte {
	return rekey(outboxKey, runlog.OutboxPrefix(), RetryPrefix())
}

func deadLetterKeyOf(outboxKey []byte) []byte {
	return rekey(outboxKey, runlog.OutboxPrefix(), DeadLetterPrefix())
}

// OutboxKeyOfDeadLetter answers the outbox key a dead-letter record came from.
func OutboxKeyOfDeadLetter(dlqKey []byte) []byte {
	return rekey(dlqKey, DeadLetterPrefix(), runlog.OutboxPrefix())
}

// RetryRecord counts the failed deliveries of one outbox entry. It never
// holds the payload.
type RetryRecord struct {
	// Attempts is how many publishes failed.
	Attempts int `json:"attempts"`
	// LastError is the last failure (truncated; no payload).
	LastError string `json:"last_error"`
	// FirstFailedAt and LastFailedAt bound the failures (UTC).
	FirstFailedAt time.Time `json:"first_failed_at"`
	LastFailedAt  time.Time `json:"last_failed_at"`
	// NextAttemptAt is when the worker tries again (UTC).
	NextAttemptAt time.Time `json:"next_attempt_at"`
}

// DeadLetter is an outbox entry the worker gave up on: the entry as the engine
// wrote it, and why.
type DeadLetter struct {
	// OutboxKey is the key the entry had, for replay.
	OutboxKey string `json:"outbox_key"`
	// Entry is the outbox entry as an runlog.OutboxEntry (JSON) holding its
	// event when it names one event and decoded, else the entry as stored
	// when it is valid JSON; RawEntry holds it otherwise (base64 in the
	// record: one that could not be decoded). An entry that named several
	// events is in Events instead.
	Entry    json.RawMessage `json:"entry,omitempty"`
	RawEntry []byte          `json:"raw_entry,omitempty"`
	// Events holds, when the entry named several events, each of them as an
	// outbox entry of its own (runlog.OutboxEntry JSON): the record is whole
	// without the run's log, which retention may remove, and a replay puts
	// them back one entry each.
	Events []DeadEvent `json:"events,omitempty"`
	// The envelope, when the entry decoded, so operators can list and filter.
	TenantID  string `json:"tenant_id,omitempty"`
	EventID   string `json:"event_id,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	RunSeq    uint64 `json:"run_seq,omitempty"`
	EventType string `json:"event_type,omitempty"`
	// Attempts is how many publishes failed (0 for a poison entry).
	Attempts int `json:"attempts"`
	// Reason is "max_attempts" or "undecodable".
	Reason string `json:"reason"`
	// LastError is the last failure (truncated; no payload).
	LastError string `json:"last_error"`
	// FirstFailedAt and DeadLetteredAt are UTC.
	FirstFailedAt  time.Time `json:"first_failed_at,omitzero"`
	DeadLetteredAt time.Time `json:"dead_lettered_at"`
}

// DeadEvent is one event of a dead-lettered entry that named several.
type DeadEvent struct {
	RunSeq uint64          `json:"run_seq"`
	Entry  json.RawMessage `json:"entry"`
}

// Dead-letter reasons.
const (
	ReasonMaxAttempts = "max_attempts"
	ReasonUndecodable = "undecodable"
)

// maxErrorBytes bounds the error text stored in records and logs.
const maxErrorBytes = 512

func truncateError(err error) string {
	s := err.Error()
	if len(s) > maxErrorBytes {
		s = s[:maxErrorBytes] + "…"
	}
	return s
}

// messagesOf answers the messages of a resolved outbox entry, or why the
// entry is poison. They are taken from the front of *pool, a page's
// messages allocated at once, each entry's a full slice of it.
func messagesOf(e runlog.ResolvedEntry, pool *[]Message) ([]Message, error) {
	if e.Err != nil {
		return nil, e.Err
	}
	if len(e.Events) == 0 {
		return nil, errors.New("outbox entry names no event")
	}
	n := len(e.Events)
	if len(*pool) < n {
		*pool = make([]Message, n)
	}
	msgs := (*pool)[:n:n]
	*pool = (*pool)[n:]
	for i, ev := range e.Events {
		msgs[i] = Message{TenantID: ev.TenantID, EventID: ev.EventID, RunID: ev.RunID, RunSeq: ev.RunSeq, EventType: ev.EventType,
			Event: ev.Event}
	}
	return msgs, nil
}

// runMessagesOf answers the messages of a run's entry resolved, or why
// the entry is poison; taken from *pool as messagesOf's are. A run's entry
// may name no event still unpublished: it answers none.
func runMessagesOf(r *runPart, pool *[]Message) ([]Message, error) {
	switch {
	case r.err != nil:
		return nil, r.err
	case r.res.Err != nil:
		return nil, r.res.Err
	case len(r.res.Events) == 0:
		return nil, nil
	}
	return messagesOf(runlog.ResolvedEntry{Events: r.res.Events}, pool)
}

// messagesIn counts the events of a page's resolved entries.
func messagesIn(resolved []runlog.ResolvedEntry, runs map[int]*runPart) int {
	n := 0
	for _, e := range resolved {
		n += len(e.Events)
	}
	for _, r := range runs {
		n += len(r.res.Events)
	}
	return n
}

func newDeadLetter(key, value []byte, msg Message, all []Message, reason string, attempts int, lastErr string, first, now time.Time) DeadLetter {
	d := DeadLetter{OutboxKey: string(key), TenantID: msg.TenantID, EventID: msg.EventID, RunID: msg.RunID,
		RunSeq: msg.RunSeq, EventType: msg.EventType, Attempts: attempts, Reason: reason, LastError: lastErr,
		FirstFailedAt: first.UTC(), DeadLetteredAt: now.UTC()}
	switch {
	case len(all) == 1:
		// The entry with its one event, so that the record is whole and its
		// replay never needs the log (the entry only refers to the event).
		d.Entry = mustMarshal(runlog.OutboxEntry{TenantID: all[0].TenantID, Event: all[0].Event})
	case len(all) > 1:
		for _, m := range all {
			d.Events = append(d.Events, DeadEvent{RunSeq: m.RunSeq, Entry: mustMarshal(runlog.OutboxEntry{TenantID: m.TenantID, Event: m.Event})})
		}
	case json.Valid(value):
		d.Entry = bytes.Clone(value)
	default:
		d.RawEntry = bytes.Clone(value)
	}
	return d
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("export: record does not marshal: " + err.Error())
	}
	return b
}
