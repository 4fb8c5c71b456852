package runcodec

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/weft-dev/weft/engine/runstate"
)

// AppendEventJSON appends an event's JSON to b, byte for byte what
// json.Marshal makes of it (the form the event bus carries), without
// reflection.
func AppendEventJSON(b []byte, ev *runstate.Event) ([]byte, error) {
	return appendJSONEvent(b, ev)
}

func appendJSONKey(b []byte, first *bool, key string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	return append(b, key...)
}

func appendJSONStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONTime writes a time as time.Time's MarshalJSON does.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); t.Location() != time.UTC || y < 0 || y > 9999 {
		js, err := t.MarshalJSON() // the rare cases, and the errors, exactly as encoding/json meets them
		if err != nil {
			return b, err
		}
		return append(b, js...), nil
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// appendJSONRaw writes raw JSON as encoding/json writes a json.RawMessage:
// compacted, with <, >, &, U+2028 and U+2029 escaped.
func appendJSONRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	// The common case: raw is already compact and has nothing to escape, so
	// that it is written as it is once valid.
	if rawAsIs(raw) && json.Valid(raw) {
		return append(b, raw...), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return b, err
	}
	start := 0
	c := buf.Bytes()
	for i := 0; i < len(c); i++ {
		switch {
		case c[i] == '<' || c[i] == '>' || c[i] == '&':
			b = append(b, c[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c[i]>>4], hexDigits[c[i]&0xF])
			start = i + 1
		case c[i] == 0xE2 && i+2 < len(c) && c[i+1] == 0x80 && c[i+2]&^1 == 0xA8:
			b = append(b, c[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[c[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(b, c[start:]...), nil
}

const hexDigits = "0123456789abcdef"

// rawAsIs reports whether raw JSON has none of the bytes appendJSONRaw
// changes or may change: white space (even in strings), <, >, &, and 0xE2
// (the first byte of U+2028 and U+2029).
func rawAsIs(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xE2:
			return false
		}
	}
	return true
}

// jsonPlain holds the ASCII bytes a JSON string carries as they are: not a
// control character, '"', '\\', or one of the HTML-escaped '<', '>', '&'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString writes s as encoding/json writes a string, HTML-escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
