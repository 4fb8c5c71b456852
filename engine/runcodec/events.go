package runcodec

import (
	"fmt"

	"github.com/weft-dev/weft/engine/runstate"
	"google.golang.org/protobuf/encoding/protowire"
)

// FormatEventGroup is the events one decision appended together, version
// 1, stored as one record at the run_seq of the last of them: field 1,
// repeated, each event's stored form (FormatEvent, its format byte first),
// in run_seq order, which are consecutive. An older weftd's groups are in
// this form, and so are the groups AppendEventGroup cannot write as
// FormatEventDeltas.
const FormatEventGroup byte = 0x07

// eventGroupEvent is the field of a group that holds one event.
const eventGroupEvent = 1

// IsEventGroup reports whether a stored value is an event group, of either
// version, alone or compressed (FormatCompressed).
func IsEventGroup(b []byte) bool {
	f := Format(b)
	return f == FormatEventGroup || isDeltasFormat(f)
}

// isDeltasFormat reports whether f is a group of deltas, of any version.
func isDeltasFormat(f byte) bool {
	return f == FormatEventDeltas || f == FormatEventDeltasIDs || f == FormatEventDeltasRun
}

// isDeltas reports whether an uncompressed record is a group of deltas,
// of any version.
func isDeltas(b []byte) bool {
	return len(b) > 0 && isDeltasFormat(b[0])
}

// AppendEventGroup appends the stored form of events, which a decision
// appended together with consecutive run_seqs, to b, to be stored under
// the key of run (wf:{run}:ev:): one event's own record (AppendEvent) when
// there is one, else a group of them (FormatEventDeltasRun; FormatEventGroup
// for events it cannot hold, which AppendEvent did not write in its order).
func AppendEventGroup(b []byte, run string, events []runstate.Event) []byte {
	if len(events) == 1 {
		return AppendEvent(b, &events[0])
	}
	b, _ = appendGroupCompressed(b, run, events, nil)
	return b
}

// appendGroupCompressed appends events, more than one, as a group record
// (appendGroupRecord), compressed when that is shorter; with forms, each
// event's own stored form to them too when the record is of deltas
// (formed; an older group leaves them to its caller).
func appendGroupCompressed(b []byte, run string, events []runstate.Event, forms *EventForms) (_ []byte, formed bool) {
	b = appendEncodedCompressed(b, func(raw []byte) []byte {
		raw, formed = appendGroupRecord(raw, run, events, forms)
		return raw
	})
	return b, formed
}

// EventForms are the stored forms (FormatEvent) of the events of the
// groups AppendEventGroupForms appended, one after another in Buf; event
// i's ends at Ends[i].
type EventForms struct {
	Buf  []byte
	Ends []int
}

// Each answers the events' forms, in order, each a capped slice of Buf.
func (f *EventForms) Each(fn func(form []byte)) {
	from := 0
	for _, end := range f.Ends {
		fn(f.Buf[from:end:end])
		from = end
	}
}

// AppendEventGroupForms appends events to b as AppendEventGroup does and
// each event's own stored form — what EachStoredEvent answers of the
// record — to forms, from the encoding the record is made of, so that a
// reader of what was just written need not rebuild them.
func AppendEventGroupForms(b []byte, run string, events []runstate.Event, forms *EventForms) []byte {
	if len(events) > 1 {
		out, formed := appendGroupCompressed(b, run, events, forms)
		if formed {
			return out
		}
		b = out
	} else {
		b = AppendEvent(b, &events[0])
	}
	for i := range events {
		forms.Buf = AppendEvent(forms.Buf, &events[i])
		forms.Ends = append(forms.Ends, len(forms.Buf))
	}
	return b
}

// appendGroupRecord appends events, more than one, as a group record,
// uncompressed: FormatEventDeltasRun (with forms, each event's own stored
// form to them too: formed), else FormatEventGroup.
func appendGroupRecord(b []byte, run string, events []runstate.Event, forms *EventForms) (_ []byte, formed bool) {
	if out, ok := appendEventDeltas(b, run, events, forms); ok {
		return out, true
	}
	return appendEventGroupV1(b, events), false
}

// appendEventGroupV1 appends events as a FormatEventGroup record.
func appendEventGroupV1(b []byte, events []runstate.Event) []byte {
	b = append(b, FormatEventGroup)
	for i := range events {
		// The event's length is not known before it is encoded: room for a
		// two-byte length is left and the event moved when it needs more.
		b = protowire.AppendTag(b, eventGroupEvent, protowire.BytesType)
		at := len(b)
		b = append(b, 0, 0)
		b = AppendEvent(b, &events[i])
		n := len(b) - at - 2
		b = putLength(b, at, n)
	}
	return b
}

// putLength writes the length n of the bytes at b[at+2:] into the two
// bytes left for it at b[at:], moving them when n needs fewer or more.
func putLength(b []byte, at, n int) []byte {
	var l [binaryMaxVarint]byte
	size := len(protowire.AppendVarint(l[:0], uint64(n)))
	if size != 2 {
		body := append([]byte(nil), b[at+2:]...)
		b = append(protowire.AppendVarint(b[:at], uint64(n)), body...)
		return b
	}
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

// binaryMaxVarint is the longest varint.
const binaryMaxVarint = 10

// EachStoredEvent calls fn with the stored form of every event a record
// under wf:{run}:ev: holds (run: the run its key names), in run_seq
// order: the record itself for an event stored alone (binary or the JSON
// of an older weftd), each of its events for a group — of a group of
// deltas, each event's own stored form (FormatEvent) rebuilt, byte for
// byte what AppendEvent writes of it. The forms fn gets are slices of b,
// or of memory allocated for them; fn may keep them.
func EachStoredEvent(b []byte, run string, fn func(event []byte) error) error {
	if compressedFormat(b) != 0 {
		raw, err := decompressedGroup(b)
		if err != nil {
			return err
		}
		b = raw
	}
	switch {
	case isDeltas(b):
		return eachRebuiltEvent(b, run, fn)
	case !IsEventGroup(b):
		return fn(b)
	}
	n := 0
	err := eachField(b[1:], func(num protowire.Number, f field) error {
		if num != eventGroupEvent {
			return nil
		}
		if f.typ != protowire.BytesType || len(f.v) == 0 {
			return fmt.Errorf("event group: event %d is not a stored event", n)
		}
		n++
		return fn(f.v)
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("event group: no events")
	}
	return err
}

// eachRebuiltEvent calls fn with each event of a FormatEventDeltas group,
// rebuilt into memory of their own.
func eachRebuiltEvent(b []byte, run string, fn func(event []byte) error) error {
	return eachEventOfDeltas(b, run, make([]byte, 0, 3*len(b)), true, fn) // the events rebuilt are about that
}

// DecodeEvents appends to evs every event a record under wf:{run}:ev:
// holds (EachStoredEvent), decoded.
func DecodeEvents(b []byte, run string, evs []runstate.Event) ([]runstate.Event, error) {
	if compressedFormat(b) != 0 {
		raw, err := decompressedGroup(b)
		if err != nil {
			return evs, err
		}
		b = raw
	}
	if isDeltas(b) {
		// Each event is rebuilt into the same memory: decoding copies what
		// it keeps.
		err := eachEventOfDeltas(b, run, make([]byte, 0, 512), false, func(stored []byte) error {
			evs = append(evs, runstate.Event{})
			return DecodeEvent(stored, &evs[len(evs)-1])
		})
		return evs, err
	}
	err := EachStoredEvent(b, run, func(stored []byte) error {
		evs = append(evs, runstate.Event{})
		return DecodeEvent(stored, &evs[len(evs)-1])
	})
	return evs, err
}

// decompressedGroup answers the event group a compressed record holds.
func decompressedGroup(b []byte) ([]byte, error) {
	if f := compressedFormat(b); f != FormatEventGroup && !isDeltasFormat(f) {
		return nil, fmt.Errorf("event group: compressed: %w", ErrUnknownFormat)
	}
	raw, err := decompressed(b)
	if err != nil {
		return nil, fmt.Errorf("event group: %w", err)
	}
	return raw, nil
}
