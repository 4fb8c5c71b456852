package runcodec

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// FormatOutboxRef is an outbox entry that refers to its event instead of
// copying it, version 1: field 1 the run's tenant. The event is the one its
// key names (ob:{run}:{run_seq} refers to wf:{run}:ev:{run_seq}).
const FormatOutboxRef byte = 0x03

// AppendOutboxRef appends an outbox reference to b.
func AppendOutboxRef(b []byte, tenantID string) []byte {
	return appendElem(append(b, FormatOutboxRef), 1, tenantID)
}

// IsOutboxRef reports whether a stored outbox entry is a reference.
func IsOutboxRef(b []byte) bool { return len(b) > 0 && b[0] == FormatOutboxRef }

// DecodeOutboxRef answers the tenant of an outbox reference.
func DecodeOutboxRef(b []byte) (tenantID string, err error) {
	if !IsOutboxRef(b) {
		return "", fmt.Errorf("outbox entry: %w", ErrUnknownFormat)
	}
	found := false
	err = eachField(b[1:], func(n protowire.Number, f field) error {
		if n != 1 {
			return nil
		}
		found = true
		tenantID, err = f.str()
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("outbox entry: no tenant")
	}
	return tenantID, err
}
