package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// errTooLarge and errTooDeep are the limits a conversion stops at.
var (
	errTooLarge = errors.New("too large")
	errTooDeep  = errors.New("nested too deeply")
)

// FromJSON reads JSON text as a CEL value, exactly (docs: the package's
// "Values" section): null, booleans and strings as themselves; a number
// written without a fraction or exponent as an int when it fits in 64 bits
// (a uint above the int range), every other number as a double; arrays as
// lists; objects as maps with string keys, iterated in key order. It
// refuses text that is not one JSON value, a duplicate key, a number beyond
// a double's range and nesting deeper than maxDepth.
func FromJSON(text []byte, maxDepth int) (ref.Val, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	v, err := readValue(d, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// readValue reads the next value from d.
func readValue(d *json.Decoder, depth, maxDepth int) (ref.Val, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	switch t := tok.(type) {
	case nil:
		return types.NullValue, nil
	case bool:
		return types.Bool(t), nil
	case string:
		return types.String(t), nil
	case json.Number:
		return numberValue(string(t))
	case json.Delim:
		if depth >= maxDepth {
			return nil, errTooDeep
		}
		if t == '[' {
			return readList(d, depth+1, maxDepth)
		}
		if t == '{' {
			return readObject(d, depth+1, maxDepth)
		}
	}
	return nil, errors.New("not a JSON value")
}

// jsonSyntax answers a decoder's error without the text it read.
func jsonSyntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed JSON at offset %d", se.Offset)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("malformed JSON: unexpected end")
	}
	return errors.New("malformed JSON")
}

// readList reads a list's elements up to its closing bracket.
func readList(d *json.Decoder, depth, maxDepth int) (ref.Val, error) {
	elems := []ref.Val{}
	for d.More() {
		v, err := readValue(d, depth, maxDepth)
		if err != nil {
			return nil, err
		}
		elems = append(elems, v)
	}
	if _, err := d.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, elems), nil
}

// readObject reads an object's members up to its closing brace.
func readObject(d *json.Decoder, depth, maxDepth int) (ref.Val, error) {
	m := map[ref.Val]ref.Val{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, jsonSyntax(err)
		}
		key := types.String(tok.(string))
		if _, dup := m[key]; dup {
			return nil, errors.New("duplicate key in a JSON object")
		}
		v, err := readValue(d, depth, maxDepth)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	if _, err := d.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	return newSortedMap(types.NewRefValMap(types.DefaultTypeAdapter, m)), nil
}

// numberValue reads a JSON number's text: an int, a uint or a double.
func numberValue(s string) (ref.Val, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.Int(i), nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return types.Uint(u), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errors.New("a JSON number is out of range")
	}
	return types.Double(f), nil
}

// ToJSON writes a CEL value as JSON text, exactly (the inverse of
// [FromJSON] on what it reads): ints and uints as integers, doubles always
// with a fraction or an exponent (so they read back as doubles), timestamps
// as RFC 3339 strings in UTC, durations as protobuf JSON strings ("1.5s"),
// lists as arrays and maps (whose keys must be strings) as objects with
// sorted keys. It refuses NaN and infinities, bytes, types, optional
// values, and results longer than maxBytes or deeper than maxDepth.
func ToJSON(v ref.Val, maxBytes, maxDepth int) (json.RawMessage, error) {
	w := &writer{max: maxBytes, maxDepth: maxDepth}
	if err := w.value(v, 0); err != nil {
		return nil, err
	}
	return json.RawMessage(w.b), nil
}

// writer appends JSON to b, bounded.
type writer struct {
	b        []byte
	max      int
	maxDepth int
}

// value appends one value.
func (w *writer) value(v ref.Val, depth int) error {
	if len(w.b) > w.max {
		return errTooLarge
	}
	switch t := v.(type) {
	case types.Null:
		w.b = append(w.b, "null"...)
	case types.Bool:
		w.b = strconv.AppendBool(w.b, bool(t))
	case types.Int:
		w.b = strconv.AppendInt(w.b, int64(t), 10)
	case types.Uint:
		w.b = strconv.AppendUint(w.b, uint64(t), 10)
	case types.Double:
		return w.double(float64(t))
	case types.String:
		return w.str(string(t))
	case types.Timestamp:
		return w.str(t.Time.UTC().Format(time.RFC3339Nano))
	case types.Duration:
		return w.str(durationJSON(t.Duration))
	case *types.Err:
		return t
	case traits.Lister:
		return w.list(t, depth)
	case traits.Mapper:
		return w.object(t, depth)
	default:
		return fmt.Errorf("a value of type %s has no JSON form", v.Type().TypeName())
	}
	if len(w.b) > w.max {
		return errTooLarge
	}
	return nil
}

// double appends a finite double so that it reads back as a double.
func (w *writer) double(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return errors.New("a double that is NaN or infinite has no JSON form")
	}
	start := len(w.b)
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if !bytes.ContainsAny(w.b[start:], ".e") {
		w.b = append(w.b, ".0"...)
	}
	return nil
}

// str appends a JSON string.
func (w *writer) str(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("a string that is not UTF-8 has no JSON form")
	}
	b, _ := json.Marshal(s)
	w.b = append(w.b, b...)
	return nil
}

// list appends an array.
func (w *writer) list(l traits.Lister, depth int) error {
	if depth >= w.maxDepth {
		return errTooDeep
	}
	w.b = append(w.b, '[')
	it := l.Iterator()
	for i := 0; it.HasNext() == types.True; i++ {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		if err := w.value(it.Next(), depth+1); err != nil {
			return err
		}
	}
	w.b = append(w.b, ']')
	return nil
}

// object appends an object with its keys sorted.
func (w *writer) object(m traits.Mapper, depth int) error {
	if depth >= w.maxDepth {
		return errTooDeep
	}
	var keys []string
	it := m.Iterator()
	for it.HasNext() == types.True {
		k, ok := it.Next().(types.String)
		if !ok {
			return errors.New("a map whose keys are not strings has no JSON form")
		}
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	w.b = append(w.b, '{')
	for i, k := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		if err := w.str(k); err != nil {
			return err
		}
		w.b = append(w.b, ':')
		if err := w.value(m.Get(types.String(k)), depth+1); err != nil {
			return err
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// durationJSON writes a duration as protobuf's JSON does: whole seconds,
// then up to nine fractional digits, then "s" ("90s", "-1.5s").
func durationJSON(d time.Duration) string {
	sign, n := "", uint64(d)
	if d < 0 {
		sign, n = "-", uint64(-(d+1))+1
	}
	sec, frac := n/uint64(time.Second), n%uint64(time.Second)
	if frac == 0 {
		return fmt.Sprintf("%s%ds", sign, sec)
	}
	return fmt.Sprintf("%s%d.%ss", sign, sec, strings.TrimRight(fmt.Sprintf("%09d", frac), "0"))
}
