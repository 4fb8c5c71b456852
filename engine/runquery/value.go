package runquery

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Value is one field's value: its Type says which of the other fields
// holds it. A double is finite.
type Value struct {
	Type Type
	S    string
	I    int64
	F    float64
	B    bool
	T    time.Time
}

// KeywordValue, IntValue, DoubleValue, BoolValue and TimeValue build values.
func KeywordValue(s string) Value { return Value{Type: Keyword, S: s} }

// IntValue is an int Value.
func IntValue(i int64) Value { return Value{Type: Int, I: i} }

// DoubleValue is a double Value.
func DoubleValue(f float64) Value { return Value{Type: Double, F: f} }

// BoolValue is a bool Value.
func BoolValue(b bool) Value { return Value{Type: Bool, B: b} }

// TimeValue is a time Value (in UTC).
func TimeValue(t time.Time) Value { return Value{Type: Time, T: t.UTC()} }

// Fields are a run's values as a query reads them: a field without a
// value (a run not yet started has no startedAt; a search attribute not
// set) answers false.
type Fields interface {
	Field(name string) (Value, bool)
}

// Values is a map of field values, a Fields.
type Values map[string]Value

// Field implements Fields.
func (v Values) Field(name string) (Value, bool) {
	x, ok := v[name]
	return x, ok
}

// compare orders two values of comparable types (keywords with keywords,
// numbers with numbers exactly, times, bools): -1, 0 or +1, ok false when
// they cannot be compared.
func compare(a, b Value) (int, bool) {
	switch {
	case a.Type == Keyword && b.Type == Keyword:
		return strings.Compare(a.S, b.S), true
	case a.Type == Time && b.Type == Time:
		return a.T.Compare(b.T), true
	case a.Type == Bool && b.Type == Bool:
		return cmp.Compare(boolInt(a.B), boolInt(b.B)), true
	case a.Type == Int && b.Type == Int:
		return cmp.Compare(a.I, b.I), true
	case a.Type == Double && b.Type == Double:
		return cmp.Compare(a.F, b.F), true
	case a.Type == Int && b.Type == Double:
		return compareIntDouble(a.I, b.F), true
	case a.Type == Double && b.Type == Int:
		return -compareIntDouble(b.I, a.F), true
	}
	return 0, false
}

// compareIntDouble compares an int and a finite double exactly.
func compareIntDouble(i int64, f float64) int {
	if f >= math.MaxInt64 { // 2^63: beyond every int
		return -1
	}
	if f < math.MinInt64 {
		return 1
	}
	fl := math.Floor(f)
	if c := cmp.Compare(i, int64(fl)); c != 0 {
		return c
	}
	if f == fl {
		return 0
	}
	return -1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AttributeValue reads a search attribute's value of type t from JSON (as
// a submission, a definition's ${{ }} or a worker gives it): a keyword is
// a string of at most 256 bytes, an int an integer, a double a number, a
// bool a boolean, a time an RFC 3339 string. The error names the rule,
// never the value.
func AttributeValue(t Type, raw json.RawMessage) (Value, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return Value{}, errors.New("a search attribute's value must be JSON")
	}
	if d.More() {
		return Value{}, errors.New("a search attribute's value must be one JSON value")
	}
	bad := errors.New("a search attribute of type " + t.String() + " needs " + needs(t))
	switch t {
	case Keyword:
		s, ok := v.(string)
		if !ok {
			return Value{}, bad
		}
		if len(s) > MaxKeyword || !utf8.ValidString(s) {
			return Value{}, errors.New("a keyword is at most " + strconv.Itoa(MaxKeyword) + " bytes of UTF-8")
		}
		return KeywordValue(s), nil
	case Int:
		n, ok := v.(json.Number)
		i, err := strconv.ParseInt(string(n), 10, 64)
		if !ok || err != nil {
			return Value{}, bad
		}
		return IntValue(i), nil
	case Double:
		n, ok := v.(json.Number)
		f, err := strconv.ParseFloat(string(n), 64)
		if !ok || err != nil {
			return Value{}, bad
		}
		return DoubleValue(f), nil
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return Value{}, bad
		}
		return BoolValue(b), nil
	case Time:
		s, ok := v.(string)
		tm, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil {
			return Value{}, bad
		}
		return TimeValue(tm), nil
	}
	return Value{}, bad
}

// needs says what a literal of a field of type t is.
func needs(t Type) string {
	switch t {
	case Keyword:
		return "a string"
	case Int:
		return "an integer"
	case Double:
		return "a number"
	case Bool:
		return "TRUE or FALSE"
	case Time:
		return `an RFC 3339 time such as "2026-11-28T10:00:00Z"`
	}
	return "a value"
}
