package runcodec

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// FormatOutboxRun is a run's one outbox entry, ob:{run}: (the run's outbox
// prefix itself), version 1: field 1 the run's tenant, field 2 the first
// run_seq the entry names. The entry names the run's events from that
// run_seq to the last the run appended: the decision that appended the
// first of them wrote it, later decisions assert it is there and leave it
// as it is, and the export worker deletes it once it has published the
// run's events through its last (docs/semantics.md#outbox).
const FormatOutboxRun byte = 0x0a

// OutboxRun is what a run's outbox entry holds.
type OutboxRun struct {
	TenantID string
	// From is the first run_seq the entry names (never 0).
	From uint64
}

// AppendOutboxRun appends a run's outbox entry to b.
func AppendOutboxRun(b []byte, r OutboxRun) []byte {
	b = appendElem(append(b, FormatOutboxRun), 1, r.TenantID)
	return appendUint(b, 2, r.From)
}

// IsOutboxRun reports whether a stored outbox entry is a run's entry.
func IsOutboxRun(b []byte) bool { return len(b) > 0 && b[0] == FormatOutboxRun }

// DecodeOutboxRun decodes a run's outbox entry.
func DecodeOutboxRun(b []byte) (OutboxRun, error) {
	var r OutboxRun
	if !IsOutboxRun(b) {
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
			r.From, err = f.uint()
		}
		return err
	})
	switch {
	case err != nil:
	case !found:
		err = errors.New("outbox entry: no tenant")
	case r.From == 0:
		err = errors.New("outbox entry: no first run_seq")
	}
	return r, err
}
