package runlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/reuse"
	"github.com/weft-dev/weft/store"
)

// The transactional outbox (docs/semantics.md#outbox). A run has at most
// one entry, ob:{run}: (RunOutboxKey; runcodec.OutboxRun: the run's
// tenant and the first run_seq it names): the decision that appends the
// run's first unexported events puts it, on condition that the run has
// none; every later decision that appends events asserts that it is still
// there and writes nothing to it, so a deletion by the export worker that
// commits first makes that decision lose the race and be made again. The
// entry names the run's events from its first run_seq through the last
// the run appended; the export worker resolves them with
// OutboxCache.ResolveRuns, publishes them, and deletes the entry on
// condition that neither it nor the run's checkpoint (which every decision
// that appends events rewrites) changed since it read them.
//
// Entries an older weftd wrote are resolved with ResolveOutbox: one per
// decision, ob:{run}:{run_seq}, referring to that decision's events
// (runcodec.OutboxRef), or, older still, holding a copy of one event as
// JSON (OutboxEntry).

// OutboxPrefix is the key prefix of the transactional outbox, for export workers.
func OutboxPrefix() []byte { return keyspace.Outbox.KeyPrefix() }

// RunOutboxPrefix is the prefix of a run's outbox entries: its own entry
// (RunOutboxKey, the prefix itself) and any an older weftd wrote.
func RunOutboxPrefix(runID string) []byte { return keyspace.Outbox.KeyPrefix(runID) }

// RunOutboxKey is a run's outbox entry, ob:{run}: — the run's outbox
// prefix itself, so that it sorts before the run's older entries, and a
// run's retry and dead-letter prefixes (obr:{run}:, dlq:{run}:) hold its
// export records whatever their form.
func RunOutboxKey(runID string) []byte { return RunOutboxPrefix(runID) }

// OutboxWrite is what a decision that appends events does with its run's
// outbox entry (AppendEvents).
type OutboxWrite uint8

const (
	// NoOutbox: export is off; no entry is written or asserted.
	NoOutbox OutboxWrite = iota
	// OutboxPut: the run has no entry; the batch puts one, from the
	// decision's first event, on condition that it has none.
	OutboxPut
	// OutboxKept: the run has an entry, which names the decision's events
	// too; the batch asserts it is present and writes nothing to it.
	OutboxKept
)

// OutboxKey is the entry an older weftd wrote for the events a decision
// appended from run_seq seq on.
func OutboxKey(runID string, seq uint64) []byte {
	return keyspace.Outbox.Key(runID, store.Uint64(seq))
}

// OutboxEntry is the outbox entry an older weftd wrote: the event's JSON,
// copied, with the tenant it belongs to (buses partition by tenant).
type OutboxEntry struct {
	TenantID string          `json:"tenant_id"`
	Event    json.RawMessage `json:"event"`
}

// OutboxEvent is one event of an outbox entry, as a bus carries it.
type OutboxEvent struct {
	TenantID  string
	EventID   string
	RunID     string
	RunSeq    uint64
	EventType string
	// Event is the event's JSON (runstate.Event's encoding): made from the
	// stored event, or, for an older entry, its copy byte for byte.
	Event json.RawMessage
	// Err, when set, says why the event could not be resolved; the other
	// fields are then empty.
	Err error
}

// ResolvedEntry is an outbox entry resolved: the events it names, in
// run_seq order, or why it could not be resolved (a poison entry).
type ResolvedEntry struct {
	Events []OutboxEvent
	Err    error
}

// ResolveOutbox resolves outbox entries an older weftd wrote, in order
// (a run's entry, runcodec.OutboxRun, is left unresolved, its zero value):
// the events the references name are read in one call (store.GetMany),
// the copies decode from themselves. An entry that cannot be resolved — undecodable,
// or naming an event that is not there — answers its Err; an error reading
// the store fails the whole call.
func ResolveOutbox(ctx context.Context, st store.Store, entries []store.Item) ([]ResolvedEntry, error) {
	return ResolveOutboxInto(ctx, st, entries, &OutboxBuffers{})
}

// OutboxBuffers is the memory ResolveOutboxInto answers in — the entries,
// their events, the events' JSON — kept for the next call given the same
// buffers, which writes over it. The zero value is ready to use; it is
// not safe for concurrent use.
type OutboxBuffers struct {
	out  []ResolvedEntry
	refs []outboxRef
	pool []OutboxEvent
	buf  []byte
}

// maxKeptJSON and maxKept bound the memory OutboxBuffers keeps between
// calls, the JSON buffer's bytes and each slice's values: a page of huge
// or very many events is answered in memory of its own.
const (
	maxKeptJSON = 4 << 20
	maxKept     = 1 << 14
)

// ResolveOutboxInto is ResolveOutbox answering in bufs' memory: what it
// answers — the entries, their events and the events' JSON — is
// overwritten by the next call given bufs, so give them again only once
// done with the answer (for the export worker: its page published and
// acknowledged).
func ResolveOutboxInto(ctx context.Context, st store.Store, entries []store.Item, bufs *OutboxBuffers) ([]ResolvedEntry, error) {
	out := reuse.Slice(&bufs.out, len(entries), maxKept)
	refs := reuse.Slice(&bufs.refs, len(entries), maxKept)
	var keys [][]byte
	var r resolver
	for i, it := range entries {
		if runcodec.IsOutboxRun(it.Value) {
			continue // a run's entry: OutboxCache.ResolveRuns resolves it
		}
		if !runcodec.IsOutboxRef(it.Value) {
			ev := resolveCopy(it.Value)
			if ev.Err != nil {
				out[i].Err = ev.Err
			} else {
				out[i].Events = []OutboxEvent{ev}
			}
			continue
		}
		ref, err := parseOutboxRef(it)
		if err != nil {
			out[i].Err = err
			continue
		}
		refs[i] = ref
		r.events += int(ref.last - ref.first + 1)
		if ref.grouped {
			keys = append(keys, EventKey(ref.runID, ref.last))
			continue
		}
		for seq := ref.first; seq <= ref.last; seq++ {
			keys = append(keys, EventKey(ref.runID, seq))
		}
	}
	if len(keys) > 0 {
		found, err := store.GetMany(ctx, st, keys)
		if err != nil {
			return nil, fmt.Errorf("read the %d events of %d outbox entries: %w", len(keys), len(entries), err)
		}
		r.keys, r.found = keys, found
		for _, it := range found {
			r.sizeFor(it.Value)
		}
	}
	if r.events == 0 {
		return out, nil
	}
	r.pool = reuse.Slice(&bufs.pool, r.events, maxKept)
	if cap(bufs.buf) < r.jsonSize && r.jsonSize <= maxKeptJSON {
		bufs.buf = make([]byte, 0, r.jsonSize)
	}
	r.buf = bufs.buf[:0]
	if cap(r.buf) < r.jsonSize {
		r.buf = make([]byte, 0, r.jsonSize) // too large to keep
	}
	for i, ref := range refs {
		if ref.runID != "" {
			out[i] = r.resolve(ref)
		}
	}
	return out, nil
}

// resolver turns the events of a page's entries into their JSON: those
// the outbox cache held, and those read from the store. The references read
// are resolved in the order their keys were asked for, and GetMany answers
// the keys found in that order, so each reference's events are matched by
// walking both lists once, with no second key built.
type resolver struct {
	keys  [][]byte     // the event keys asked for, reference by reference
	found []store.Item // those found, in the same order
	// events counts the events the page's references name, and jsonSize is
	// about the size of their JSON (two to three times the binary form).
	events, jsonSize int
	// pool holds the page's events, each reference's a slice of it.
	pool []OutboxEvent
	// buf holds the JSON of the events resolved so far, each event's a
	// full slice of it that later appends never touch.
	buf []byte
}

// sizeFor counts stored events in the size of the page's JSON.
func (r *resolver) sizeFor(values ...[]byte) {
	for _, v := range values {
		r.jsonSize += jsonRoom(v)
	}
}

// jsonRoom is the room an event's JSON is given: JSON is two to three
// times the binary form.
func jsonRoom(body []byte) int { return 3*len(body) + 64 }

// entryEvents answers room for the n events of one reference.
func (r *resolver) entryEvents(n int) []OutboxEvent {
	if len(r.pool) < n {
		r.pool = make([]OutboxEvent, n)
	}
	evs := r.pool[:0:n]
	r.pool = r.pool[n:]
	return evs
}

// resolveHeld answers the events the reference names from values, their
// stored forms.
func (r *resolver) resolveHeld(ref outboxRef, values [][]byte) ResolvedEntry {
	out := ResolvedEntry{Events: r.entryEvents(len(values))}
	for j, body := range values {
		e, err := r.event(ref, body)
		if err != nil {
			return ResolvedEntry{Err: fmt.Errorf("outbox entry's event %d: %w", ref.first+uint64(j), err)}
		}
		out.Events = append(out.Events, e)
	}
	return out
}

// resolve answers the events the reference names, whose keys are the next
// of r.keys: one, their group's, for a grouped reference, else one per
// event, r.last-r.first+1.
func (r *resolver) resolve(ref outboxRef) ResolvedEntry {
	n := int(ref.last - ref.first + 1)
	if ref.grouped {
		return r.resolveGroup(ref, n)
	}
	keys := r.keys[:n]
	r.keys = r.keys[n:]
	out := ResolvedEntry{Events: r.entryEvents(n)}
	var failed error
	for j, key := range keys {
		body, ok := r.next(key)
		if !ok {
			if failed == nil {
				failed = fmt.Errorf("outbox entry refers to run_seq %d, which is not stored", ref.first+uint64(j))
			}
			continue
		}
		if failed != nil {
			continue // the rest of this reference's events, skipped in step
		}
		e, err := r.event(ref, body)
		if err != nil {
			failed = fmt.Errorf("outbox entry's event %d: %w", ref.first+uint64(j), err)
			continue
		}
		out.Events = append(out.Events, e)
	}
	if failed != nil {
		return ResolvedEntry{Err: failed}
	}
	return out
}

// resolveGroup answers the n events of a grouped reference, from the one
// record its next key names.
func (r *resolver) resolveGroup(ref outboxRef, n int) ResolvedEntry {
	key := r.keys[0]
	r.keys = r.keys[1:]
	body, ok := r.next(key)
	if !ok {
		return ResolvedEntry{Err: fmt.Errorf("outbox entry refers to the events of run_seq %d to %d, which are not stored", ref.first, ref.last)}
	}
	var values [][]byte
	if err := runcodec.EachStoredEvent(body, ref.runID, func(v []byte) error {
		values = append(values, v)
		return nil
	}); err != nil {
		return ResolvedEntry{Err: fmt.Errorf("outbox entry's events %d to %d: %w", ref.first, ref.last, err)}
	}
	if len(values) != n {
		return ResolvedEntry{Err: fmt.Errorf("outbox entry names %d events, its record at run_seq %d holds %d", n, ref.last, len(values))}
	}
	return r.resolveHeld(ref, values)
}

// next answers the value of the next item found when it is key's, taking
// it; GetMany answers only the keys found, in the order asked.
func (r *resolver) next(key []byte) ([]byte, bool) {
	if len(r.found) == 0 || !bytes.Equal(r.found[0].Key, key) {
		return nil, false
	}
	body := r.found[0].Value
	r.found = r.found[1:]
	return body, true
}

// event answers one stored event with its JSON, written from the stored
// form (runcodec.AppendStoredEventJSON: no event decoded in between).
func (r *resolver) event(ref outboxRef, body []byte) (OutboxEvent, error) {
	if free := cap(r.buf) - len(r.buf); free < jsonRoom(body) {
		r.buf = make([]byte, 0, max(8<<10, jsonRoom(body)))
	}
	start := len(r.buf)
	buf, env, err := runcodec.AppendStoredEventJSON(r.buf, body)
	if err != nil {
		return OutboxEvent{}, err
	}
	r.buf = buf
	js := buf[start:len(buf):len(buf)]
	runID := ref.runID // the run the entry's key names, whose events these are
	if string(env.RunID) != runID {
		runID = string(env.RunID)
	}
	e := checkEnvelope(OutboxEvent{TenantID: ref.tenantID, EventID: env.ID, RunID: runID, RunSeq: env.Seq,
		EventType: eventType(env.Type), Event: js})
	return e, e.Err
}

// eventTypes holds the event types, so that a type read is not a string
// allocated per event.
var eventTypes = func() map[string]string {
	m := map[string]string{}
	for _, t := range runstate.EventTypes() {
		m[t] = t
	}
	return m
}()

func eventType(b []byte) string {
	if t, ok := eventTypes[string(b)]; ok {
		return t
	}
	return string(b)
}

// outboxRef is a reference entry parsed: its tenant and the run_seqs of the
// events it names.
type outboxRef struct {
	tenantID, runID string
	first, last     uint64
	// grouped: the events are one record, at last (runcodec.OutboxRef).
	grouped bool
}

// maxEventsPerEntry bounds the events one outbox entry may name (a decision
// appends a handful).
const maxEventsPerEntry = 1 << 16

func parseOutboxRef(it store.Item) (outboxRef, error) {
	parts, err := store.SplitKey(it.Key)
	if err != nil || len(parts) != 3 || parts[0] != "ob" || parts[1] == "" {
		return outboxRef{}, errors.New("outbox key is not ob:{run}:{run_seq}")
	}
	first, err := store.ParseUint64(parts[2])
	if err != nil {
		return outboxRef{}, errors.New("outbox key's run_seq is not a number")
	}
	ref, err := runcodec.DecodeOutboxRef(it.Value)
	if err != nil {
		return outboxRef{}, err
	}
	last := max(ref.LastSeq, first)
	if last-first >= maxEventsPerEntry {
		return outboxRef{}, errors.New("outbox entry names too many events")
	}
	return outboxRef{tenantID: ref.TenantID, runID: parts[1], first: first, last: last, grouped: ref.Grouped && last > first}, nil
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
