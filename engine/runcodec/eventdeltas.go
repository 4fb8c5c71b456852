package runcodec

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
	"google.golang.org/protobuf/encoding/protowire"
)

// FormatEventDeltas is an event group, version 2: the events one decision
// appended, with consecutive run_seqs, each stored as what it does not
// share with the event before it. Its fields: 1 the first event's run_seq
// (each next event's is one more), 2 each event (repeated, in run_seq
// order), a message of
//
//   - 1 the event's fields (runstate.Event's wire fields, as FormatEvent
//     has them) whose value differs from the event before's — every field of
//     the first event — but for run_seq (field 1 of the group says it),
//     data (below) and the idempotency key; the event type may be a varint,
//     its type's KeySpan bit plus one (runstate.EventTypeBit), and
//     occurred_at a varint, zigzag nanoseconds after the event's emitted_at;
//     the idempotency key is there only when it is not the one
//     docs/semantics.md#event-idempotency-key derives from the event's own
//     fields (derivedKey), an empty one as an empty field 5;
//   - 2 likewise the fields of its data (EventData), a time among them
//     possibly a varint after emitted_at;
//   - 3 and 4 the numbers of the event's fields and of its data's fields
//     that the event before had and it has not (packed varints);
//   - 5 data's string fields whose value is the run_id, '/' and these bytes.
//
// A reader rebuilds every event's own stored form (FormatEvent) from them,
// byte for byte what AppendEvent writes of the event, so that the group's
// events read, and export as JSON, exactly as the same events stored alone
// or in a FormatEventGroup would.
const FormatEventDeltas byte = 0x09

// FormatEventDeltasIDs is an event group, version 3: FormatEventDeltas,
// but for each event's event_id, which is there only when it is not the
// one runstate.EventID derives from the event's run_id and run_seq
// (derivedEventID), an empty one as an empty field 2, and is never taken
// from the event before.
const FormatEventDeltasIDs byte = 0x0c

// FormatEventDeltasRun is an event group, version 4: FormatEventDeltasIDs,
// but for the first event's run_id, which is there only when it is not the
// run whose key (wf:{run}:ev:) holds the record — the run its reader
// names — an empty one as an empty field 3, and for data's string fields
// whose value is a UUID in its canonical text (36 lowercase characters),
// which are in field 6 (deltaDataUUIDs) as their 16 bytes.
const FormatEventDeltasRun byte = 0x0d

// The fields of a FormatEventDeltas record and of each event in it.
const (
	deltasFirstSeq = 1
	deltasEvent    = 2

	deltaFields       = 1
	deltaData         = 2
	deltaCleared      = 3
	deltaDataCleared  = 4
	deltaDataRunChild = 5
	deltaDataUUIDs    = 6
)

// The wire fields of runstate.Event the group treats on their own (the
// envelope reader, envelopeFields.note, knows 1 to 4 too).
const (
	evType        = 1
	evID          = 2
	evRunID       = 3
	evSeq         = 4
	evKey         = 5
	evEmittedAt   = 6
	evOccurredAt  = 7
	evStepID      = 9
	evLogical     = 10
	evEngine      = 11
	evPlanVersion = 12
	evData        = 13
)

// eventRanks are the ranks, in the order AppendEvent writes them, of the
// event's fields the group treats on their own.
var eventRanks = struct{ typ, id, runID, seq, key, emittedAt, occurredAt, stepID, logical, engine, planVersion, data int }{
	eventJSON.index(evType), eventJSON.index(evID), eventJSON.index(evRunID), eventJSON.index(evSeq), eventJSON.index(evKey),
	eventJSON.index(evEmittedAt), eventJSON.index(evOccurredAt), eventJSON.index(evStepID), eventJSON.index(evLogical),
	eventJSON.index(evEngine), eventJSON.index(evPlanVersion), eventJSON.index(evData),
}

// eventTypeOfBit names the event type of each KeySpan bit.
var eventTypeOfBit = func() (t [64]string) {
	for _, typ := range runstate.EventTypes() {
		if bit, ok := runstate.EventTypeBit(typ); ok {
			t[bit] = typ
		}
	}
	return t
}()

// eventSpans is one event's stored form (FormatEvent) cut into its fields,
// by rank in the order AppendEvent writes them (the JSON tables' order): a
// field's span is its wire bytes, tag included, every element of a
// repeated field together; nil for a field not written. Its arrays are
// sized for the event's and its data's fields (eventSpansFit), so that a
// group is coded in memory of its own, on the stack.
type eventSpans struct {
	top  [maxEventFields][]byte
	data [maxEventDataFields][]byte
	// dataSet has the bit of each rank of data that holds a span.
	dataSet uint64
}

// setData sets rank r of the data to span (nil: none).
func (s *eventSpans) setData(r int, span []byte) {
	s.data[r] = span
	if span == nil {
		s.dataSet &^= 1 << r
	} else {
		s.dataSet |= 1 << r
	}
}

// The most fields eventSpans holds of an event and of its data.
const (
	maxEventFields     = 16
	maxEventDataFields = 64
)

// eventSpansFit is true when runstate.Event and EventData have no more
// fields than eventSpans holds (a test holds it; a field beyond them
// makes AppendEventGroup write FormatEventGroup instead).
var eventSpansFit = len(eventJSON.fields) <= maxEventFields && len(eventDataJSON.fields) <= maxEventDataFields

func (s *eventSpans) reset() {
	clear(s.top[:])
	for set := s.dataSet; set != 0; set &= set - 1 {
		s.data[bits.TrailingZeros64(set)] = nil
	}
	s.dataSet = 0
}

// cut cuts wire, the fields of an event as AppendEvent writes them, into s,
// and reports whether they are in its order (each rank once, ascending).
func (s *eventSpans) cut(wire []byte) bool {
	s.reset()
	if !cutSpans(wire, eventJSON, s.top[:], s) {
		return false
	}
	for r, span := range s.data[:len(eventDataJSON.fields)] {
		if span != nil {
			s.dataSet |= 1 << r
		}
	}
	return true
}

// cutSpans cuts wire into spans by m's ranks, and the event's data, when
// event is not nil, into its data by its own.
func cutSpans(wire []byte, m *jsonMessageFields, spans [][]byte, event *eventSpans) bool {
	last, pos, from := -1, 0, 0
	var f field
	for pos < len(wire) {
		rest, err := f.read(wire[pos:])
		if err != nil {
			return false
		}
		r := m.index(f.n)
		if r < last || r < 0 {
			return false
		}
		if event != nil && f.n == evData && (f.typ != protowire.BytesType || !cutSpans(f.v, eventDataJSON, event.data[:], nil)) {
			return false
		}
		if r != last { // else the next element of a repeated field
			from = pos
		}
		pos = len(wire) - len(rest)
		spans[r], last = wire[from:pos], r
	}
	return true
}

// deltaCoder is the memory one group's encoding or decoding works in,
// kept for the next group (deltaCoders).
type deltaCoder struct {
	spans     [2]eventSpans
	prev, cur *eventSpans // of spans
	buf       [2][]byte   // the current and the previous event's stored form
	// arena holds the spans a decoding rebuilds (a type's name, a time, a
	// run child, a derived key), each appended once.
	arena                 []byte
	cleared, child, uuids []byte
	// derivedIDs: the group is FormatEventDeltasIDs or FormatEventDeltasRun.
	derivedIDs bool
	// keyedRun: the group is FormatEventDeltasRun, its first event's run_id
	// that of run unless it says otherwise, and its data may hold UUIDs.
	keyedRun bool
	run      string
}

var deltaCoders = sync.Pool{New: func() any {
	c := &deltaCoder{buf: [2][]byte{make([]byte, 0, 512), make([]byte, 0, 512)}, arena: make([]byte, 0, 1024)}
	c.prev, c.cur = &c.spans[0], &c.spans[1]
	return c
}}

func getDeltaCoder() *deltaCoder {
	c := deltaCoders.Get().(*deltaCoder)
	c.arena = c.arena[:0]
	return c
}

// put gives the coder back, holding no view of the caller's memory.
func (c *deltaCoder) put() {
	c.prev.reset()
	c.cur.reset()
	c.derivedIDs, c.keyedRun, c.run = false, false, ""
	deltaCoders.Put(c)
}

// appendEventDeltas appends events, whose run_seqs are consecutive, as a
// FormatEventDeltasRun record to be stored under run's key; ok is false,
// and b unchanged, for events it cannot hold that way.
func appendEventDeltas(b []byte, run string, events []runstate.Event, forms *EventForms) (_ []byte, ok bool) {
	if !eventSpansFit {
		return b, false
	}
	c := getDeltaCoder()
	defer c.put()
	start := len(b)
	var formsFrom, endsFrom int
	if forms != nil {
		formsFrom, endsFrom = len(forms.Buf), len(forms.Ends)
	}
	refuse := func() ([]byte, bool) {
		if forms != nil {
			forms.Buf, forms.Ends = forms.Buf[:formsFrom], forms.Ends[:endsFrom]
		}
		return b[:start], false
	}
	b = append(b, FormatEventDeltasRun)
	c.derivedIDs, c.keyedRun, c.run = true, true, run
	b = appendUint(b, deltasFirstSeq, events[0].Seq)
	for i := range events {
		if events[i].Seq != events[0].Seq+uint64(i) {
			return refuse()
		}
		c.buf[0] = appendEvent(c.buf[0][:0], &events[i])
		if !c.cur.cut(c.buf[0]) {
			return refuse()
		}
		if forms != nil {
			forms.Buf = append(append(forms.Buf, FormatEvent), c.buf[0]...) // AppendEvent's bytes
			forms.Ends = append(forms.Ends, len(forms.Buf))
		}
		b = appendMessage(b, deltasEvent, func(b []byte) []byte { return c.appendDelta(b, &events[i], i == 0) })
		c.prev, c.cur = c.cur, c.prev
		c.buf[0], c.buf[1] = c.buf[1], c.buf[0]
	}
	return b, true
}

// appendDelta appends the fields of the current event that the previous
// one does not share (the first event: all of them).
func (c *deltaCoder) appendDelta(b []byte, ev *runstate.Event, first bool) []byte {
	base, hasBase := spanTime(c.cur.top[eventRanks.emittedAt])
	c.cleared = c.cleared[:0]
	b = appendNonEmpty(b, deltaFields, func(b []byte) []byte {
		for r, span := range c.cur.top[:len(eventJSON.fields)] {
			switch {
			case r == eventRanks.seq || r == eventRanks.data:
			case r == eventRanks.runID && first && c.keyedRun:
				if c.run != "" && ev.RunID == c.run {
					continue
				}
				if span == nil { // an empty run_id: not the reader's run
					b = protowire.AppendTag(b, evRunID, protowire.BytesType)
					b = append(b, 0)
				}
				b = append(b, span...)
			case r == eventRanks.id && c.derivedIDs:
				if id := derivedEventID(ev.RunID, ev.Seq); isIDSpan(span, id) {
					continue
				}
				if span == nil { // an empty id, which derivedEventID never is
					b = protowire.AppendTag(b, evID, protowire.BytesType)
					b = append(b, 0)
				}
				b = append(b, span...)
			case r == eventRanks.key:
				if sum := derivedKey(ev.RunID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt); isKeySpan(span, sum) {
					continue
				}
				if span == nil { // an empty key, which derivedKey never is
					b = protowire.AppendTag(b, evKey, protowire.BytesType)
					b = append(b, 0)
				}
				b = append(b, span...)
			case bytes.Equal(span, c.prev.top[r]):
			case span == nil:
				c.cleared = protowire.AppendVarint(c.cleared, uint64(eventJSON.fields[r].num))
			case r == eventRanks.typ:
				if bit, ok := runstate.EventTypeBit(ev.Type); ok {
					b = protowire.AppendTag(b, evType, protowire.VarintType)
					b = protowire.AppendVarint(b, uint64(bit)+1)
					continue
				}
				b = append(b, span...)
			case r == eventRanks.occurredAt && hasBase:
				b = appendTimeAfter(b, span, base)
			default:
				b = append(b, span...)
			}
		}
		return b
	})
	cleared := len(c.cleared)
	var run []byte
	if f, ok := spanField(c.cur.top[eventRanks.runID]); ok && f.typ == protowire.BytesType && len(f.v) > 0 {
		run = f.v
	}
	child, uuids := c.child[:0], c.uuids[:0]
	b = appendNonEmpty(b, deltaData, func(b []byte) []byte {
		for set := c.cur.dataSet | c.prev.dataSet; set != 0; set &= set - 1 {
			r := bits.TrailingZeros64(set)
			span, fd := c.cur.data[r], &eventDataJSON.fields[r]
			switch {
			case bytes.Equal(span, c.prev.data[r]):
			case span == nil:
				c.cleared = protowire.AppendVarint(c.cleared, uint64(fd.num))
			case fd.kind == jsonTime && hasBase:
				b = appendTimeAfter(b, span, base)
			case fd.kind == jsonString && fd.alt == 0 && run != nil:
				if rest, ok := afterRun(span, run); ok {
					child = protowire.AppendTag(child, fd.num, protowire.BytesType)
					child = protowire.AppendBytes(child, rest)
					continue
				}
				if id, ok := uuidSpan(span); ok && c.keyedRun {
					uuids = appendBytes(uuids, fd.num, id[:])
					continue
				}
				b = append(b, span...)
			default:
				b = append(b, span...)
			}
		}
		return b
	})
	b = appendBytes(b, deltaCleared, c.cleared[:cleared])
	b = appendBytes(b, deltaDataCleared, c.cleared[cleared:])
	c.child, c.uuids = child, uuids
	b = appendBytes(b, deltaDataRunChild, child)
	return appendBytes(b, deltaDataUUIDs, uuids)
}

// uuidSpan answers the 16 bytes of the UUID the one string field span
// holds, when it is a UUID's canonical text: 36 characters, lowercase hex
// in groups of 8, 4, 4, 4 and 12 separated by '-' (formatUUID writes it
// back byte for byte).
func uuidSpan(span []byte) (id [16]byte, ok bool) {
	f, ok := spanField(span)
	if !ok || f.typ != protowire.BytesType || len(f.v) != 36 {
		return id, false
	}
	at := 0
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if f.v[i] != '-' {
				return id, false
			}
			continue
		}
		hi, ok := lowerHex(f.v[i])
		if !ok {
			return id, false
		}
		i++
		lo, ok := lowerHex(f.v[i])
		if !ok {
			return id, false
		}
		id[at] = hi<<4 | lo
		at++
	}
	return id, true
}

// lowerHex answers the value of a lowercase hex digit.
func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// formatUUID appends id's canonical text.
func formatUUID(b []byte, id []byte) []byte {
	const digits = "0123456789abcdef"
	for i, x := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, digits[x>>4], digits[x&15])
	}
	return b
}

// isKeySpan reports whether span is the idempotency key sum as AppendEvent
// writes it: its 32 bytes in field 15.
func isKeySpan(span []byte, sum [32]byte) bool {
	return len(span) == 34 && span[0] == 15<<3|byte(protowire.BytesType) && span[1] == 32 && [32]byte(span[2:]) == sum
}

// afterRun answers what follows "{run}/" in the one string field span
// holds, when it begins so.
func afterRun(span, run []byte) ([]byte, bool) {
	f, ok := spanField(span)
	if !ok || len(f.v) <= len(run) || !bytes.HasPrefix(f.v, run) || f.v[len(run)] != '/' {
		return nil, false
	}
	return f.v[len(run)+1:], true
}

// appendNonEmpty appends the fields body appends as field n, unless it
// appends none.
func appendNonEmpty(b []byte, n protowire.Number, body func([]byte) []byte) []byte {
	start := len(b)
	b = appendMessage(b, n, body)
	if len(b) == start+2 { // the tag and a length of 0
		return b[:start]
	}
	return b
}

// appendTimeAfter appends the time field span holds as a varint, its
// nanoseconds after base, when that is shorter and reads back to the same
// time; else span itself.
func appendTimeAfter(b, span []byte, base time.Time) []byte {
	t, n, ok := spanTimeField(span)
	if !ok {
		return append(b, span...)
	}
	d := t.Sub(base)
	if again := base.Add(d); again.Unix() != t.Unix() || again.Nanosecond() != t.Nanosecond() {
		return append(b, span...) // out of a Duration's range
	}
	mark := len(b)
	b = protowire.AppendTag(b, n, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(int64(d)))
	if len(b)-mark >= len(span) {
		return append(b[:mark], span...) // no shorter
	}
	return b
}

// spanField reads the one field a span holds.
func spanField(span []byte) (field, bool) {
	var f field
	if len(span) == 0 {
		return f, false
	}
	rest, err := f.read(span)
	return f, err == nil && len(rest) == 0
}

// spanTime reads the time field a span holds; false for none.
func spanTime(span []byte) (time.Time, bool) {
	t, _, ok := spanTimeField(span)
	return t, ok
}

// spanTimeField reads the time field a span holds, as field.time does, and
// its number; false for none.
func spanTimeField(span []byte) (time.Time, protowire.Number, bool) {
	f, ok := spanField(span)
	if !ok || f.typ != protowire.BytesType {
		return time.Time{}, 0, false
	}
	var sec, nsec int64
	v := f.v
	var g field
	for len(v) > 0 {
		rest, err := g.read(v)
		if err != nil {
			return time.Time{}, 0, false
		}
		v = rest
		switch {
		case g.n == 1 && g.typ == protowire.VarintType:
			sec = protowire.DecodeZigZag(g.x)
		case g.n == 2 && g.typ == protowire.VarintType && g.x < uint64(time.Second):
			nsec = int64(g.x)
		case g.n == 1 || g.n == 2:
			return time.Time{}, 0, false
		}
	}
	return time.Unix(sec, nsec).UTC(), f.n, true
}

// eachEventOfDeltas calls fn with the stored form (FormatEvent) of every
// event of a FormatEventDeltas record stored under run's key, in order,
// each rebuilt into buf: from its start (fn's slice is valid until the next
// call), or after the events before it when keep (fn may keep its slice).
func eachEventOfDeltas(b []byte, run string, buf []byte, keep bool, fn func(event []byte) error) error {
	c := getDeltaCoder()
	defer c.put()
	c.derivedIDs = b[0] == FormatEventDeltasIDs || b[0] == FormatEventDeltasRun
	c.keyedRun, c.run = b[0] == FormatEventDeltasRun, run
	var first uint64
	i := 0
	err := eachField(b[1:], func(n protowire.Number, f field) error {
		switch n {
		case deltasFirstSeq:
			var err error
			if first, err = f.uint(); err != nil {
				return fmt.Errorf("event group: %w", err)
			}
		case deltasEvent:
			if f.typ != protowire.BytesType {
				return fmt.Errorf("event group: event %d: %w", i, f.wrongType())
			}
			if !keep {
				buf = buf[:0]
			}
			start := len(buf)
			var err error
			if buf, err = c.rebuild(buf, f.v, first+uint64(i), i == 0); err != nil {
				return fmt.Errorf("event group: event %d: %w", i, err)
			}
			i++
			return fn(buf[start:len(buf):len(buf)])
		}
		return nil
	})
	if err == nil && i == 0 {
		err = errors.New("event group: no events")
	}
	return err
}

// rebuild applies one event's delta to the spans of the event before it
// (c.cur; none before the first) and appends the event's stored form to buf.
func (c *deltaCoder) rebuild(buf, delta []byte, seq uint64, first bool) ([]byte, error) {
	var key, id []byte
	keyGiven, idGiven, runGiven := false, false, false
	var fields, data, child, uuids []byte
	err := eachField(delta, func(n protowire.Number, f field) error {
		var err error
		switch n {
		case deltaFields:
			fields, err = f.bytes()
		case deltaData:
			data, err = f.bytes()
		case deltaCleared, deltaDataCleared:
			var v []byte
			if v, err = f.bytes(); err == nil {
				err = c.clearFields(v, n == deltaDataCleared)
			}
		case deltaDataRunChild:
			child, err = f.bytes()
		case deltaDataUUIDs:
			if c.keyedRun {
				uuids, err = f.bytes()
			}
		}
		return err
	})
	if err != nil {
		return buf, err
	}
	// The event's own fields first: its emitted_at is the base of its
	// times, and its run_id the prefix of its data's run children.
	var base time.Time
	hasBase := false
	err = eachSpan(fields, eventJSON, func(r int, f field, span []byte) error {
		switch {
		case r == eventRanks.seq || r == eventRanks.data:
			return nil // the group's run_seq, and the data below
		case r == eventRanks.runID && first && c.keyedRun:
			runGiven = true
			if f.typ == protowire.BytesType && len(f.v) == 0 {
				return nil // an empty run_id
			}
		case r == eventRanks.key:
			key, keyGiven = span, true
			if f.typ == protowire.BytesType && len(f.v) == 0 {
				key = nil
			}
			return nil
		case r == eventRanks.id && c.derivedIDs:
			id, idGiven = span, true
			if f.typ == protowire.BytesType && len(f.v) == 0 {
				id = nil
			}
			return nil
		case r == eventRanks.typ && f.typ == protowire.VarintType:
			if f.x == 0 || f.x > 64 || eventTypeOfBit[f.x-1] == "" {
				return fmt.Errorf("field %d: no event type of code %d", f.n, f.x)
			}
			c.setOwn(r, false, func(b []byte) []byte { return appendString(b, evType, eventTypeOfBit[f.x-1]) })
			return nil
		case r == eventRanks.occurredAt && f.typ == protowire.VarintType:
			return nil // once emitted_at is known
		}
		c.cur.top[r] = span
		return nil
	})
	if err != nil {
		return buf, err
	}
	if first && c.keyedRun && !runGiven {
		if c.run == "" {
			return buf, errors.New("the run_id of the run whose key holds the group, which its reader did not give")
		}
		c.setOwn(eventRanks.runID, false, func(b []byte) []byte { return appendString(b, evRunID, c.run) })
	}
	if c.derivedIDs {
		if !idGiven {
			id = c.derivedIDSpan(seq)
		}
		c.cur.top[eventRanks.id] = id
	}
	if base, hasBase = spanTime(c.cur.top[eventRanks.emittedAt]); !hasBase {
		base = time.Time{}
	}
	relative := func(r int, data bool, f field) error {
		if !hasBase {
			return fmt.Errorf("field %d: a time after emitted_at, which the event has not", f.n)
		}
		t := base.Add(time.Duration(protowire.DecodeZigZag(f.x)))
		c.setOwn(r, data, func(b []byte) []byte { return appendTime(b, f.n, t) })
		return nil
	}
	err = eachSpan(fields, eventJSON, func(r int, f field, _ []byte) error {
		if r == eventRanks.occurredAt && f.typ == protowire.VarintType {
			return relative(r, false, f)
		}
		return nil
	})
	if err != nil {
		return buf, err
	}
	err = eachSpan(data, eventDataJSON, func(r int, f field, span []byte) error {
		if eventDataJSON.fields[r].kind == jsonTime && f.typ == protowire.VarintType {
			return relative(r, true, f)
		}
		c.cur.setData(r, span)
		return nil
	})
	if err != nil {
		return buf, err
	}
	run, _ := spanField(c.cur.top[eventRanks.runID])
	err = eachSpan(child, eventDataJSON, func(r int, f field, _ []byte) error {
		v, err := f.bytes()
		if err == nil {
			c.setOwn(r, true, func(b []byte) []byte {
				b = protowire.AppendTag(b, f.n, protowire.BytesType)
				b = protowire.AppendVarint(b, uint64(len(run.v)+1+len(v)))
				return append(append(append(b, run.v...), '/'), v...)
			})
		}
		return err
	})
	if err != nil {
		return buf, err
	}
	err = eachSpan(uuids, eventDataJSON, func(r int, f field, _ []byte) error {
		if f.typ != protowire.BytesType || len(f.v) != 16 {
			return fmt.Errorf("field %d: a UUID of %d bytes", f.n, len(f.v))
		}
		c.setOwn(r, true, func(b []byte) []byte {
			b = protowire.AppendTag(b, f.n, protowire.BytesType)
			return formatUUID(append(b, 36), f.v)
		})
		return nil
	})
	if err != nil {
		return buf, err
	}
	if !keyGiven {
		key = c.derivedKeySpan()
	}
	return c.appendStored(buf, seq, key), nil
}

// setOwn sets rank r (of the data when data) to the span appended, in the
// coder's arena.
func (c *deltaCoder) setOwn(r int, data bool, appendSpan func([]byte) []byte) {
	c.cur.set(r, data, c.own(appendSpan))
}

// own answers the span appended, in the coder's arena.
func (c *deltaCoder) own(appendSpan func([]byte) []byte) []byte {
	start := len(c.arena)
	c.arena = appendSpan(c.arena)
	return c.arena[start:len(c.arena):len(c.arena)]
}

func (s *eventSpans) set(r int, data bool, span []byte) {
	if data {
		s.setData(r, span)
	} else {
		s.top[r] = span
	}
}

// clearFields removes the fields whose numbers v lists (packed varints).
func (c *deltaCoder) clearFields(v []byte, data bool) error {
	m, spans := eventJSON, c.cur.top[:]
	if data {
		m, spans = eventDataJSON, c.cur.data[:]
	}
	for len(v) > 0 {
		n, size := protowire.ConsumeVarint(v)
		if size < 0 {
			return protowire.ParseError(size)
		}
		v = v[size:]
		if n <= uint64(protowire.MaxValidNumber) {
			if r := m.index(protowire.Number(n)); r >= 0 && data {
				c.cur.setData(r, nil)
			} else if r >= 0 {
				spans[r] = nil
			}
		}
	}
	return nil
}

// eachSpan calls fn with each field of wire a rank of m reads, its rank and
// its span, the elements of a repeated field together; a field m does not
// know is skipped.
func eachSpan(wire []byte, m *jsonMessageFields, fn func(r int, f field, span []byte) error) error {
	var f field
	for len(wire) > 0 {
		start := wire
		rest, err := f.read(wire)
		if err != nil {
			return err
		}
		wire = rest
		r := m.index(f.n)
		if r < 0 {
			continue
		}
		// The next elements of a repeated field join its span.
		for len(wire) > 0 {
			var g field
			more, err := g.read(wire)
			if err != nil || m.index(g.n) != r || g.typ != protowire.BytesType || f.typ != protowire.BytesType {
				break
			}
			wire = more
		}
		if err := fn(r, f, start[:len(start)-len(wire)]); err != nil {
			return err
		}
	}
	return nil
}

// derivedIDSpan answers the event_id field the current event's run_id
// and run_seq derive (derivedEventID), as AppendEvent writes it.
func (c *deltaCoder) derivedIDSpan(seq uint64) []byte {
	run, _ := spanField(c.cur.top[eventRanks.runID])
	id := derivedEventID(run.v, seq)
	return c.own(func(b []byte) []byte { return appendBytes(b, 14, id[:]) })
}

// isIDSpan reports whether span is the event_id id as AppendEvent writes
// it: its 16 bytes in field 14.
func isIDSpan(span []byte, id [16]byte) bool {
	return len(span) == 18 && span[0] == 14<<3|byte(protowire.BytesType) && span[1] == 16 && [16]byte(span[2:]) == id
}

// derivedKeySpan answers the idempotency key field the current event's
// fields derive (derivedKey), as AppendEvent writes it.
func (c *deltaCoder) derivedKeySpan() []byte {
	typ, _ := spanField(c.cur.top[eventRanks.typ])
	run, _ := spanField(c.cur.top[eventRanks.runID])
	step, _ := spanField(c.cur.top[eventRanks.stepID])
	plan, _ := spanField(c.cur.top[eventRanks.planVersion])
	logical, _ := spanField(c.cur.top[eventRanks.logical])
	engine, _ := spanField(c.cur.top[eventRanks.engine])
	sum := derivedKey(run.v, step.v, int(protowire.DecodeZigZag(logical.x)), typ.v, plan.v, int(protowire.DecodeZigZag(engine.x)))
	return c.own(func(b []byte) []byte { return appendBytes(b, 15, sum[:]) })
}

// appendStored appends the current event's stored form (FormatEvent) to buf.
func (c *deltaCoder) appendStored(buf []byte, seq uint64, key []byte) []byte {
	buf = append(buf, FormatEvent)
	for r, span := range c.cur.top[:len(eventJSON.fields)] {
		switch r {
		case eventRanks.seq:
			buf = appendUint(buf, evSeq, seq)
		case eventRanks.key:
			buf = append(buf, key...)
		case eventRanks.data:
			n := 0
			for set := c.cur.dataSet; set != 0; set &= set - 1 {
				n += len(c.cur.data[bits.TrailingZeros64(set)])
			}
			buf = protowire.AppendTag(buf, evData, protowire.BytesType)
			buf = protowire.AppendVarint(buf, uint64(n))
			buf = slices.Grow(buf, n)
			for set := c.cur.dataSet; set != 0; set &= set - 1 {
				buf = append(buf, c.cur.data[bits.TrailingZeros64(set)]...)
			}
		default:
			if len(span) > 0 {
				buf = append(buf, span...)
			}
		}
	}
	return buf
}

// derivedEventID is the event_id runstate.EventID answers, as its 16
// bytes: SHA-256("event|" runId "|" runSeq in decimal), its first 16 bytes
// with version 8 and RFC 9562's variant. It is part of the stored format,
// so it is written here and never changed: an event whose id is another
// is stored with its id.
func derivedEventID[S string | []byte](runID S, runSeq uint64) (id [16]byte) {
	var buf [128]byte
	b := append(append(buf[:0], "event|"...), runID...)
	b = strconv.AppendUint(append(b, '|'), runSeq, 10)
	sum := sha256.Sum256(b)
	copy(id[:], sum[:16])
	id[6] = id[6]&0x0f | 0x80
	id[8] = id[8]&0x3f | 0x80
	return id
}

// derivedKey is the idempotency key of docs/semantics.md#event-idempotency-key
// as FormatEventDeltas derives it from an event's fields, before its hex:
// SHA-256(runId | stepId | logicalAttemptId | eventType | planVersion [|
// engineAttemptId for StepAttemptRecorded]), with stepId "RUN" when empty
// and logicalAttemptId at least 1. It is part of the stored format, so it
// is written here and never changed: an event whose key is another is
// stored with its key.
func derivedKey[S string | []byte](runID, stepID S, logicalAttempt int, eventType, planVersion S, engineAttempt int) [sha256.Size]byte {
	var buf [256]byte
	b := append(buf[:0], runID...)
	b = append(b, '|')
	if len(stepID) == 0 {
		b = append(b, runstate.RunStepID...)
	} else {
		b = append(b, stepID...)
	}
	b = strconv.AppendInt(append(b, '|'), int64(max(logicalAttempt, 1)), 10)
	b = append(append(b, '|'), eventType...)
	b = append(append(b, '|'), planVersion...)
	if string(eventType) == runstate.EvStepAttemptRecorded {
		b = strconv.AppendInt(append(b, '|'), int64(engineAttempt), 10)
	}
	return sha256.Sum256(b)
}
