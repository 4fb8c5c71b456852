package fill

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Identity is what makes a clone a run of its own.
type Identity struct {
	// RunID is "run-" and a UUIDv7 of CreatedAt, as the engine names runs.
	RunID string
	// RequestID is the run_request_id it was submitted with.
	RequestID string
	// CreatedAt is when it was submitted (millisecond precision, like every
	// engine timestamp); all of its timestamps move with it.
	CreatedAt time.Time
	// EventIDs (one per event) and Tokens (one per task claim) are fresh
	// random identifiers.
	EventIDs []string
	Tokens   []string
}

// NewIdentity answers a fresh identity for a clone of t created at created,
// drawing randomness from rng.
func (t *Template) NewIdentity(created time.Time, requestID string, rng *rand.Rand) (Identity, error) {
	if !plain(requestID) {
		return Identity{}, fmt.Errorf("run_request_id %q must be plain (letters, digits, . _ / -)", requestID)
	}
	created = created.UTC().Truncate(time.Millisecond)
	id := Identity{RunID: "run-" + uuidV7(created, rng).String(), RequestID: requestID, CreatedAt: created,
		EventIDs: make([]string, len(t.events)), Tokens: make([]string, t.tokens)}
	for i := range id.EventIDs {
		id.EventIDs[i] = uuidV4(rng).String()
	}
	for i := range id.Tokens {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], rng.Uint64())
		binary.LittleEndian.PutUint64(b[8:], rng.Uint64())
		id.Tokens[i] = hex.EncodeToString(b[:])
	}
	return id, nil
}

// uuidV7 answers a version 7 UUID for the millisecond of at (RFC 9562).
func uuidV7(at time.Time, rng *rand.Rand) uuid.UUID {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[8:], rng.Uint64())
	binary.BigEndian.PutUint64(u[:8], uint64(at.UnixMilli())<<16|rng.Uint64()&0xffff)
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return u
}

// uuidV4 answers a random (version 4) UUID, as uuid.NewString does.
func uuidV4(rng *rand.Rand) uuid.UUID {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], rng.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rng.Uint64())
	u[6] = 0x40 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return u
}

// Render appends the clone's records to ops, as puts. Keys and values are
// carved from arena (grown as needed), which the caller may reuse once the
// batch is committed; it answers the grown ops and arena.
func (t *Template) Render(id Identity, ops []store.Op, arena []byte) ([]store.Op, []byte, error) {
	return t.render(id, t.items, ops, arena)
}

// render renders some of the template's records.
func (t *Template) render(id Identity, items []item, ops []store.Op, arena []byte) ([]store.Op, []byte, error) {
	if len(id.EventIDs) != len(t.events) || len(id.Tokens) != t.tokens {
		return ops, arena, fmt.Errorf("identity has %d event ids and %d tokens, the template %d and %d",
			len(id.EventIDs), len(id.Tokens), len(t.events), t.tokens)
	}
	r := renderer{t: t, id: id, delta: id.CreatedAt.Sub(t.createdAt)}
	for _, it := range items {
		start := len(arena)
		arena = r.append(arena, it.key)
		mid := len(arena)
		arena = r.append(arena, it.value)
		if it.format != 0 {
			var err error
			if arena, err = encodeAs(it.format, arena, mid); err != nil {
				return ops, arena, err
			}
		}
		ops = append(ops, store.Op{Kind: store.OpPut, Key: arena[start:mid:mid], Value: arena[mid:len(arena):len(arena)]})
	}
	return ops, arena, nil
}

type renderer struct {
	t     *Template
	id    Identity
	idem  []string // computed at the first idempotency key
	delta time.Duration
}

// idemKey answers event i's idempotency key under the clone's run id,
// computed by the engine's own function.
func (r *renderer) idemKey(i int) string {
	if r.idem == nil {
		r.idem = make([]string, len(r.t.events))
		for j, e := range r.t.events {
			r.idem[j] = runstate.IdempotencyKey(r.id.RunID, e.stepID, e.logical, e.eventType, e.planVersion, e.engineAttempt)
		}
	}
	return r.idem[i]
}

func (r *renderer) append(b []byte, segs []seg) []byte {
	for _, s := range segs {
		switch s.kind {
		case segLiteral:
			b = append(b, s.lit...)
		case segRunID:
			b = append(b, r.id.RunID...)
		case segRequestID:
			b = append(b, r.id.RequestID...)
		case segEventID:
			b = append(b, r.id.EventIDs[s.idx]...)
		case segIdemKey:
			b = append(b, r.idemKey(s.idx)...)
		case segToken:
			b = append(b, r.id.Tokens[s.idx]...)
		case segTimeText:
			b = s.t.Add(r.delta).AppendFormat(b, time.RFC3339Nano)
		case segTimeKey:
			n := s.t.Add(r.delta).UnixNano()
			if s.neg {
				n = -n
			}
			b = append(b, store.Int64(n)...)
		}
	}
	return b
}

// encodeAs re-encodes the JSON record at b[from:] in the binary format the
// engine stored it in (runcodec), in place: the decoded value holds no
// reference to the text it replaces.
func encodeAs(format byte, b []byte, from int) ([]byte, error) {
	text := b[from:]
	switch format {
	case runcodec.FormatEvent:
		var ev runstate.Event
		if err := json.Unmarshal(text, &ev); err != nil {
			return b, fmt.Errorf("render an event: %w", err)
		}
		return runcodec.AppendEvent(b[:from], &ev), nil
	case runcodec.FormatEventGroup, runcodec.FormatEventDeltas, runcodec.FormatEventDeltasIDs, runcodec.FormatEventDeltasRun:
		var evs []runstate.Event
		if err := json.Unmarshal(text, &evs); err != nil {
			return b, fmt.Errorf("render an event group: %w", err)
		}
		if len(evs) == 0 {
			return b, errors.New("render an event group: no events")
		}
		return runcodec.AppendEventGroup(b[:from], evs[len(evs)-1].RunID, evs), nil // stored under its last event's key
	case runcodec.FormatCheckpoint:
		var s runstate.State
		if err := json.Unmarshal(text, &s); err != nil {
			return b, fmt.Errorf("render a checkpoint: %w", err)
		}
		return runcodec.AppendState(b[:from], &s), nil
	case runcodec.FormatTask:
		var task runcodec.Task
		if err := json.Unmarshal(text, &task); err != nil {
			return b, fmt.Errorf("render a task: %w", err)
		}
		return runcodec.AppendTask(b[:from], &task), nil
	}
	return b, fmt.Errorf("render: unknown record format %#x", format)
}
