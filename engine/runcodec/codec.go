package runcodec

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/runstate"
	"google.golang.org/protobuf/encoding/protowire"
)

// The first byte of a stored value says its format. A JSON record, the
// format every record had before, begins with '{'; a binary record begins
// with its format byte, which no JSON text begins with.
const (
	// FormatEvent is an event, version 1: the fields of Event.
	FormatEvent byte = 0x01
	// FormatCheckpoint is a checkpoint, version 1: the fields of State.
	FormatCheckpoint byte = 0x02
)

// ErrUnknownFormat is a stored value in no format this reader knows.
var ErrUnknownFormat = errors.New("unknown record format")

// AppendEvent appends an event's stored form to b.
func AppendEvent(b []byte, ev *runstate.Event) []byte {
	return appendEvent(append(b, FormatEvent), ev)
}

// DecodeEvent decodes a stored event, in its binary form or as the JSON
// every event was stored as before.
func DecodeEvent(b []byte, ev *runstate.Event) error {
	switch {
	case len(b) > 0 && b[0] == FormatEvent:
		*ev = runstate.Event{}
		if err := decodeEvent(b[1:], ev); err != nil {
			return fmt.Errorf("event: %w", err)
		}
		return nil
	case isJSON(b):
		*ev = runstate.Event{}
		return json.Unmarshal(b, ev)
	default:
		return fmt.Errorf("event: %w", ErrUnknownFormat)
	}
}

// AppendState appends a checkpoint's stored form to b: its fields
// (FormatCheckpoint), compressed when that is shorter (FormatCompressed).
func AppendState(b []byte, s *runstate.State) []byte {
	return appendEncodedCompressed(b, func(raw []byte) []byte { return appendState(append(raw, FormatCheckpoint), s) })
}

// IsCheckpoint reports whether b is a checkpoint in a binary form:
// FormatCheckpoint, alone or compressed (FormatCompressed).
func IsCheckpoint(b []byte) bool { return Format(b) == FormatCheckpoint }

// DecodeState decodes a stored checkpoint, in its binary form or as the
// JSON every checkpoint was stored as before. A checkpoint stored before the
// failed-steps counter (State.StepFailures) has none stored, and counts its
// FAILED steps; a counter of 0 counts none, since the counter is never fewer
// than the FAILED steps (only a RETRY_STEP takes a step out of FAILED, and
// one away from the counter).
func DecodeState(b []byte, s *runstate.State) error {
	if len(b) > 0 && b[0] == FormatCompressed {
		raw, err := decompressed(b)
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if raw[0] != FormatCheckpoint {
			return fmt.Errorf("checkpoint: compressed: %w", ErrUnknownFormat)
		}
		b = raw
	}
	switch {
	case len(b) > 0 && b[0] == FormatCheckpoint:
		*s = runstate.State{}
		if err := decodeState(b[1:], s); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	case isJSON(b):
		*s = runstate.State{}
		if err := json.Unmarshal(b, s); err != nil {
			return err
		}
	default:
		return fmt.Errorf("checkpoint: %w", ErrUnknownFormat)
	}
	if s.StepFailures == 0 {
		s.StepFailures = s.CountFailedSteps()
	}
	return nil
}

// isJSON reports whether b begins as a JSON object would (after white space).
func isJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// uuidBytes answers the 16 bytes of a UUID in its canonical lowercase text
// form, which uuidString gives back byte for byte; anything else is kept
// as text.
func uuidBytes(s string) (out [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return out, false
	}
	ok = decodeLowerHex(out[0:4], s[0:8]) && decodeLowerHex(out[4:6], s[9:13]) &&
		decodeLowerHex(out[6:8], s[14:18]) && decodeLowerHex(out[8:10], s[19:23]) &&
		decodeLowerHex(out[10:16], s[24:36])
	return out, ok
}

func uuidString(b []byte) (string, error) {
	if len(b) != 16 {
		return "", errors.New("a UUID is 16 bytes")
	}
	var out [36]byte
	return string(appendUUID(out[:0], b)), nil
}

// tokenParts splits a claim token, {prefix}#{32 lowercase hex digits},
// into its prefix and the 16 bytes of its digits; anything else is kept as
// text.
func tokenParts(s string) (prefix string, random [16]byte, ok bool) {
	i := len(s) - 33
	if i < 0 || s[i] != '#' {
		return "", random, false
	}
	return s[:i], random, decodeLowerHex(random[:], s[i+1:])
}

// appendToken appends a claim token's compact form as field n: the
// prefix's bytes, then the 16 random ones.
func appendToken(b []byte, n protowire.Number, prefix string, random [16]byte) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(prefix)+len(random)))
	return append(append(b, prefix...), random[:]...)
}

// tokenString answers the claim token of a compact form, byte for byte
// what tokenParts split.
func tokenString(b []byte) (string, error) {
	if len(b) < 16 {
		return "", errors.New("a claim token's compact form ends in its 16 random bytes")
	}
	cut := len(b) - 16
	out := make([]byte, 0, cut+33)
	out = append(append(out, b[:cut]...), '#')
	return string(hex.AppendEncode(out, b[cut:])), nil
}

// sha256Bytes answers the 32 bytes of a SHA-256 in lowercase hex.
func sha256Bytes(s string) (out [32]byte, ok bool) {
	return out, len(s) == 64 && decodeLowerHex(out[:], s)
}

func sha256String(b []byte) (string, error) {
	if len(b) != 32 {
		return "", errors.New("a SHA-256 is 32 bytes")
	}
	return hex.EncodeToString(b), nil
}

// decodeLowerHex decodes s, lowercase hexadecimal of exactly 2*len(dst)
// digits, into dst, in one pass; it answers false for anything else (an
// uppercase digit among them: its text would not come back byte for byte).
func decodeLowerHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, lo := lowerHexValue[s[2*i]], lowerHexValue[s[2*i+1]]
		if hi|lo > 0x0f {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

// lowerHexValue is each byte's value as a lowercase hexadecimal digit, 0xff
// for a byte that is not one.
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()
