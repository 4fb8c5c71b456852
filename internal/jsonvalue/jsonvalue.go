// Package jsonvalue writes a google.protobuf.Value as JSON text directly and
// reads one from JSON text directly: the text protojson writes, without its
// insignificant whitespace, and the Value protojson reads, both without its
// reflection. The server writes the values of requests with it (a task's
// output, an action's input) and the Go SDK's worker a task's input for its
// activity; both fall back to protojson where Append answers false. The
// engine's conversions read stored JSON (a run's input and result, a step's
// output, a task's input) with Parse, and protojson where Parse answers false.
//
// Layering: it imports the standard library and protobuf's structpb.
package jsonvalue

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Append appends v as protojson writes it, without its insignificant
// whitespace: the same JSON, written directly instead of through reflection.
// It answers false for what protojson refuses (a Value or list item with no
// kind, a number that is NaN or infinite, a string that is not UTF-8) and
// for a nil message held in a Value; protojson then answers those.
func Append(b []byte, v *structpb.Value) ([]byte, bool) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return append(b, "null"...), true
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), true
	case *structpb.Value_NumberValue:
		return appendNumber(b, k.NumberValue)
	case *structpb.Value_StringValue:
		return appendString(b, k.StringValue)
	case *structpb.Value_StructValue:
		if k.StructValue == nil {
			return b, false
		}
		return appendStruct(b, k.StructValue.GetFields())
	case *structpb.Value_ListValue:
		if k.ListValue == nil {
			return b, false
		}
		b = append(b, '[')
		for i, item := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = Append(b, item); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false // no kind
}

// appendStruct writes a Struct's fields in the order protojson writes a
// map's entries: by key.
func appendStruct(b []byte, fields map[string]*structpb.Value) ([]byte, bool) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendString(b, k); !ok {
			return b, false
		}
		b = append(b, ':')
		if b, ok = Append(b, fields[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendNumber writes a finite number as protojson does (as encoding/json
// does): plain decimal, exponent form below 1e-6 and from 1e21.
func appendNumber(b []byte, n float64) ([]byte, bool) {
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(n); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, n, format, -1, 64)
	if format == 'e' { // e-07 → e-7
		if l := len(b); l >= 4 && b[l-4] == 'e' && b[l-3] == '-' && b[l-2] == '0' {
			b[l-2] = b[l-1]
			b = b[:l-1]
		}
	}
	return b, true
}

// appendString writes s quoted as protojson does: a quote and a backslash escaped,
// control characters as their short escape or \u00xx, everything else as
// it is.
func appendString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, false
			}
			b = append(b, s[i:i+n]...)
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c >= ' ':
			b = append(b, c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
	}
	return append(b, '"'), true
}

const hexDigits = "0123456789abcdef"
