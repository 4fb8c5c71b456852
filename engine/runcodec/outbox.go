package runcodec

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// FormatOutboxRef is an outbox entry that refers to the events it exports
// instead of copying them, version 1: field 1 the run's tenant, field 2 the
// run_seq of its last event, field 3 whether those events are one record
// (FormatEventGroup) stored at that last run_seq. The entry
// ob:{run}:{run_seq} names the events of its run from run_seq to the last,
// which one decision appended together; without field 2 it names the event
// at run_seq alone; without field 3 (an older weftd's entry) each event is
// a record of its own, at its run_seq.
const FormatOutboxRef byte = 0x03

// OutboxRef is what an outbox reference holds.
type OutboxRef struct {
	TenantID string
	// LastSeq is the run_seq of the last event the entry names; 0 names the
	// event of the entry's key alone.
	LastSeq uint64
	// Grouped says the events are one event group, stored at LastSeq.
	Grouped bool
}

// AppendOutboxRef appends an outbox reference to b.
func AppendOutboxRef(b []byte, r OutboxRef) []byte {
	b = appendElem(append(b, FormatOutboxRef), 1, r.TenantID)
	b = appendUint(b, 2, r.LastSeq)
	return appendBool(b, 3, r.Grouped)
}

// IsOutboxRef reports whether a stored outbox entry is a reference.
func IsOutboxRef(b []byte) bool { return len(b) > 0 && b[0] == FormatOutboxRef }

// DecodeOutboxRef decodes an outbox reference.
func DecodeOutboxRef(b []byte) (OutboxRef, error) {
	var r OutboxRef
	if !IsOutboxRef(b) {
		return r, fmt.Errorf("outbox entry: %w", ErrUnknownFormat)
	}
	found := false
	err := eachField(b[1:], func(n protowire.Number, f field) error {
		var err error
		switch n {
		case 1:
			found = true
			r.TenantID, err = f.str()
		case 2:
			r.LastSeq, err = f.uint()
		case 3:
			r.Grouped, err = f.bool()
		}
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("outbox entry: no tenant")
	}
	return r, err
}
