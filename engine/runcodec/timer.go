package runcodec

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// FormatTimer is a durable timer's value, version 1: the fields of Timer
// (docs/persisted-format.md#binary-records numbers them).
const FormatTimer byte = 0x05

// Timer is a durable timer's value as stored at tmr:{due}:{run}:{kind}:{ref}:
// the engine's timer record, field for field. Its JSON is the form every
// timer had before the binary one, which still loads.
type Timer struct {
	RunID string    `json:"run_id"`
	Kind  string    `json:"kind"`
	Ref   string    `json:"ref,omitempty"`
	Due   time.Time `json:"due"`
	Token string    `json:"token,omitempty"`
}

// The fields of a timer. A task's timers name the task (its id begins
// with the run's) and its claim token (which begins with the task's id),
// so both are stored as what follows the prefix when they have it (fields
// 7 and 8), and the run id as its 16 bytes when it is a canonical UUID
// (field 6).
const (
	timerRunID       = 1 // when not a canonical lowercase UUID
	timerKind        = 2
	timerRef         = 3 // when it does not begin with "{run_id}/"
	timerDue         = 4
	timerToken       = 5 // when it does not begin with "{ref}#"
	timerRunUUID     = 6
	timerRefSuffix   = 7
	timerTokenSuffix = 8
)

// timerSize is room for a task's timer with a token.
const timerSize = 96

// AppendTimer appends a timer's stored form to b (nil: a new buffer).
func AppendTimer(b []byte, t *Timer) []byte {
	if b == nil {
		b = make([]byte, 0, timerSize)
	}
	b = append(b, FormatTimer)
	if u, ok := uuidBytes(t.RunID); ok {
		b = appendBytes(b, timerRunUUID, u[:])
	} else {
		b = appendString(b, timerRunID, t.RunID)
	}
	b = appendString(b, timerKind, t.Kind)
	if suffix, ok := cutPrefix2(t.Ref, t.RunID, '/'); ok {
		b = appendString(b, timerRefSuffix, suffix)
	} else {
		b = appendString(b, timerRef, t.Ref)
	}
	b = appendTime(b, timerDue, t.Due)
	if suffix, ok := cutPrefix2(t.Token, t.Ref, '#'); ok {
		return appendString(b, timerTokenSuffix, suffix)
	}
	return appendString(b, timerToken, t.Token)
}

// cutPrefix2 answers what follows prefix and sep in s, when s begins with
// both and something follows them.
func cutPrefix2(s, prefix string, sep byte) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) < 2 || rest[0] != sep {
		return "", false
	}
	return rest[1:], true
}

// DecodeTimer decodes a stored timer, in its binary form or as the JSON
// every timer was stored as before.
func DecodeTimer(b []byte, t *Timer) error {
	switch {
	case len(b) > 0 && b[0] == FormatTimer:
		*t = Timer{}
		if err := decodeTimer(b[1:], t); err != nil {
			return fmt.Errorf("timer: %w", err)
		}
		return nil
	case isJSON(b):
		*t = Timer{}
		return json.Unmarshal(b, t)
	default:
		return fmt.Errorf("timer: %w", ErrUnknownFormat)
	}
}

// decodeTimer decodes the fields of a timer onto t. The ids stored as
// suffixes are put back once every field is read, whatever their order.
func decodeTimer(b []byte, t *Timer) error {
	var refSuffix, tokenSuffix string
	var hasRefSuffix, hasTokenSuffix bool
	err := eachField(b, func(n protowire.Number, f field) error {
		var err error
		switch n {
		case timerRunID:
			t.RunID, err = f.str()
		case timerRunUUID:
			var v []byte
			if v, err = f.bytes(); err == nil {
				t.RunID, err = uuidString(v)
			}
		case timerKind:
			t.Kind, err = f.str()
		case timerRef:
			t.Ref, err = f.str()
			hasRefSuffix = false
		case timerRefSuffix:
			refSuffix, err = f.str()
			hasRefSuffix = true
		case timerDue:
			t.Due, err = f.time()
		case timerToken:
			t.Token, err = f.str()
			hasTokenSuffix = false
		case timerTokenSuffix:
			tokenSuffix, err = f.str()
			hasTokenSuffix = true
		}
		return err
	})
	if err != nil {
		return err
	}
	if hasRefSuffix {
		t.Ref = t.RunID + "/" + refSuffix
	}
	if hasTokenSuffix {
		t.Token = t.Ref + "#" + tokenSuffix
	}
	return nil
}
