package runcodec

import (
	"encoding/json"
	"fmt"
)

// FormatReady is a ready-queue entry's value, version 1: the format byte,
// then the id of the task it queues, as its bytes.
const FormatReady byte = 0x06

// AppendReady appends the stored form of a ready entry for taskID to b.
func AppendReady(b []byte, taskID string) []byte {
	if b == nil {
		b = make([]byte, 0, 1+len(taskID))
	}
	return append(append(b, FormatReady), taskID...)
}

// DecodeReady answers the task id a stored ready entry names, in its binary
// form or as the JSON string every entry was stored as before.
func DecodeReady(b []byte) (string, error) {
	switch {
	case len(b) > 0 && b[0] == FormatReady:
		return string(b[1:]), nil
	case len(b) > 0 && b[0] == '"':
		var id string
		return id, json.Unmarshal(b, &id)
	default:
		return "", fmt.Errorf("ready entry: %w", ErrUnknownFormat)
	}
}
