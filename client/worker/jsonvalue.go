package worker

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// The worker turns every task's input into JSON for its activity, and the
// activity's JSON output into a Value for its report. protojson does both
// through reflection; these do the same directly (the same JSON text, and
// the same Value for the JSON that encoding/json writes), which a no-op
// activity's profile showed costs a few percent of a worker's CPU.

// jsonOf answers a JSON value's encoding; nil for none, and for a value JSON
// cannot carry (NaN, an infinity, a string that is not UTF-8), as protojson.
func jsonOf(v *structpb.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	b, ok := appendValue(nil, v)
	if !ok {
		return nil
	}
	return b
}

// appendValue appends v's JSON text as protojson writes it (object keys
// sorted, no spaces); false when v has no JSON text.
func appendValue(b []byte, v *structpb.Value) ([]byte, bool) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return append(b, "null"...), true
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), true
	case *structpb.Value_NumberValue:
		return appendNumber(b, k.NumberValue)
	case *structpb.Value_StringValue:
		return appendString(b, k.StringValue)
	case *structpb.Value_ListValue:
		b = append(b, '[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case *structpb.Value_StructValue:
		fields := k.StructValue.GetFields()
		keys := make([]string, 0, len(fields))
		for key := range fields {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, key := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendString(b, key); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendValue(b, fields[key]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false // no kind set: protojson refuses it too
}

// appendNumber writes n as protojson does (encoding/json's format): plain
// decimal, or an exponent below 1e-6 and from 1e21.
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

// appendString writes s as a JSON string, escaping what JSON requires as
// protojson does; false when s is not UTF-8.
func appendString(b []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return b, false
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}

// valueOf answers the Value of a JSON document (an activity's output, which
// encoding/json wrote). encoding/json reads a valid UTF-8 document as protojson
// would, except that of an object's repeated key it keeps the last where
// protojson refuses the document; what encoding/json refuses goes through
// protojson, which refuses what a Value cannot hold.
func valueOf(doc []byte) (*structpb.Value, error) {
	var x any
	if err := json.Unmarshal(doc, &x); err == nil && utf8.Valid(doc) {
		if v, err := structpb.NewValue(x); err == nil {
			return v, nil
		}
	}
	v := &structpb.Value{}
	return v, protojson.Unmarshal(doc, v)
}
