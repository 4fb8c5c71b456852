package runcodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/weft-dev/weft/engine/runstate"
)

// EventEnvelope is what a bus routes and deduplicates an event by, as
// AppendStoredEventJSON read it: Type and RunID are views of the stored
// event (or of a copy), to be converted before it changes.
type EventEnvelope struct {
	Type, RunID []byte
	ID          string
	Seq         uint64
}

// AppendStoredEventJSON appends the JSON of a stored event to b — byte for
// byte what json.Marshal makes of the runstate.Event DecodeEvent reads from
// it, the form the event bus carries — and answers its envelope. An event
// DecodeEvent cannot read answers DecodeEvent's error, one that has no JSON
// an error saying so.
//
// The binary form is written as JSON field by field, with no event decoded
// in between (json_fields.go, with the tables of fields_gen.go); an event whose fields are not as
// AppendEvent writes them is decoded and encoded again first, and an event
// stored as JSON, as every event was before, is decoded and marshalled.
func AppendStoredEventJSON(b, stored []byte) ([]byte, EventEnvelope, error) {
	if len(stored) > 0 && stored[0] == FormatEvent {
		var env envelopeFields
		if out, err := eventJSON.appendJSON(b, stored[1:], &env); err == nil {
			return out, env.envelope(), nil
		}
	}
	var ev runstate.Event
	if err := DecodeEvent(stored, &ev); err != nil {
		return b, EventEnvelope{}, err
	}
	if stored[0] != FormatEvent { // stored as JSON: its times keep their zones
		js, err := json.Marshal(&ev)
		if err != nil {
			return b, EventEnvelope{}, fmt.Errorf("as JSON: %w", err)
		}
		return append(b, js...), EventEnvelope{Type: []byte(ev.Type), RunID: []byte(ev.RunID), ID: ev.ID, Seq: ev.Seq}, nil
	}
	again := AppendEvent(nil, &ev) // as AppendEvent writes it, so that only JSON can fail
	var env envelopeFields
	out, err := eventJSON.appendJSON(b, again[1:], &env)
	if err != nil {
		return b, EventEnvelope{}, fmt.Errorf("as JSON: %w", err)
	}
	return out, env.envelope(), nil
}

func appendJSONKey(b []byte, first *bool, key string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	return append(b, key...)
}

// appendJSONTime writes a time as time.Time's MarshalJSON does.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	year, month, day, secOfDay := civil(t.Unix())
	if t.Location() != time.UTC || year < 0 || year > 9999 {
		js, err := t.MarshalJSON() // the rare cases, and the errors, exactly as encoding/json meets them
		if err != nil {
			return b, err
		}
		return append(b, js...), nil
	}
	// RFC 3339 with the nanoseconds, their trailing zeros trimmed, in UTC:
	// time.RFC3339Nano, written here digit by digit (AppendFormat pads
	// each number through a general routine, the most of its cost).
	hour, minute, sec := secOfDay/3600, secOfDay/60%60, secOfDay%60
	b = append(b, '"', digit(year/1000), digit(year/100%10), digit(year/10%10), digit(year%10),
		'-', digit(month/10), digit(month%10), '-', digit(day/10), digit(day%10),
		'T', digit(hour/10), digit(hour%10), ':', digit(minute/10), digit(minute%10), ':', digit(sec/10), digit(sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		n := 9
		for ; ns%10 == 0; n-- {
			ns /= 10
		}
		b = appendDigits(append(b, '.'), ns, n)
	}
	return append(b, 'Z', '"'), nil
}

// civil answers the UTC date of a Unix time and the second of its day
// (the proleptic Gregorian calendar, as package time counts it).
func civil(unix int64) (year, month, day, secOfDay int) {
	days, rem := unix/86400, unix%86400
	if rem < 0 {
		days, rem = days-1, rem+86400
	}
	// Days since 0000-03-01, in eras of 400 years, each 146,097 days.
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // the day of the era
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // the year of the era
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // the day of the year from March 1st
	mp := (5*doy + 2) / 153                                // the month from March
	year, day = int(yoe+era*400), int(doy-(153*mp+2)/5+1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
		year++
	}
	return year, month, day, int(rem)
}

func digit(v int) byte { return byte('0' + v) }

// appendDigits writes v, 0 <= v < 10^n, in n decimal digits.
func appendDigits(b []byte, v, n int) []byte {
	var d [9]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:n]...)
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
func appendJSONString[S string | []byte](b []byte, s S) []byte {
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
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
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
