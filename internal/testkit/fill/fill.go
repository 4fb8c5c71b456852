package fill

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// Filler fills values. The zero Filler fills every field with a value that
// is the same each time; set Rand to draw them.
type Filler struct {
	// Rand draws the values; nil draws the same ones every time (a source
	// seeded with 0).
	Rand *rand.Rand
	// Full sets every field to a value that is not zero: pointers
	// allocated, slices and maps not empty, strings not empty. Otherwise
	// each field is left zero about half the time.
	Full bool
	// Strings are the strings drawn (Strings by default). An element of a
	// []string may be the empty string even when Full.
	Strings []string
	// Ints are the integers drawn (unsigned ones take their absolute
	// value); nil draws odd integers in ±2^39.
	Ints []int64
	// Values are the values of types that have their own (enums,
	// json.RawMessage, a time range): a value of such a type is one of
	// them, drawn, a zero one included only when listed.
	Values map[reflect.Type][]any
	// EmptySlices makes some slices empty but not nil (when not Full).
	EmptySlices bool
	// SliceLen is the length of every slice filled; 0 draws 1 to 3.
	SliceLen int
	// MaxDepth is how deep pointers, slices and maps are followed (4 by
	// default); deeper, they stay nil.
	MaxDepth int
}

// Strings are the default strings: empty, short, Unicode, long, the
// canonical UUID and SHA-256 shapes and near misses of them, and bytes
// that are not UTF-8.
var Strings = []string{"", "x", "RUN", "StepCompleted", "activity-worker:w1", "é ünïcode ✓", "a:b%c",
	"0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", "0195B3C2-7C1E-7E3A-9D41-2F1A6B8C9D0E",
	strings.Repeat("ab", 32), strings.Repeat("AB", 32), strings.Repeat("z", 300), "\x00\xff"}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// Fill sets every exported field of *ptr.
func (f Filler) Fill(ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic("fill: Fill takes a non-nil pointer, got " + v.Type().String())
	}
	f.FillValue(v.Elem())
}

// FillValue sets v, which must be settable (a field, an element, what a
// pointer points at).
func (f Filler) FillValue(v reflect.Value) {
	if f.Rand == nil {
		f.Rand = rand.New(rand.NewPCG(0, 0))
	}
	if f.Strings == nil {
		f.Strings = Strings
	}
	if f.MaxDepth == 0 {
		f.MaxDepth = 4
	}
	f.value(v, 0)
}

// New answers a filled value of type T.
func New[T any](f Filler) *T {
	v := new(T)
	f.Fill(v)
	return v
}

func (f *Filler) zero() bool { return !f.Full && f.Rand.IntN(2) == 0 }

func (f *Filler) value(v reflect.Value, depth int) {
	if pool, ok := f.Values[v.Type()]; ok {
		if x := pool[f.Rand.IntN(len(pool))]; x != nil {
			v.Set(reflect.ValueOf(x).Convert(v.Type()))
		} else {
			v.SetZero()
		}
		return
	}
	switch {
	case v.Type() == timeType:
		if !f.zero() {
			sec := f.Rand.Int64N(4e9) - 1e9 // before and after 1970
			v.Set(reflect.ValueOf(time.Unix(sec, f.Rand.Int64N(1e9)).UTC()))
		}
		return
	case v.Type() == rawType:
		if !f.zero() {
			v.SetBytes([]byte(`{"k":[1,"two",null]}`))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if depth >= f.MaxDepth || f.zero() {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.value(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.value(v.Field(i), depth)
			}
		}
	case reflect.String:
		if !f.zero() {
			v.SetString(f.str(true))
		}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		if !f.zero() {
			v.SetInt(f.int())
		}
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		if !f.zero() {
			v.SetUint(f.uint())
		}
	case reflect.Float64, reflect.Float32:
		if !f.zero() {
			v.SetFloat(float64(f.Rand.IntN(40)+1) / 4)
		}
	case reflect.Bool:
		v.SetBool(f.Full || f.Rand.IntN(2) == 0)
	case reflect.Slice:
		f.slice(v, depth)
	case reflect.Map:
		if depth >= f.MaxDepth || f.zero() {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range 1 + f.Rand.IntN(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.value(k, depth+1)
			f.value(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic("fill: no values of " + v.Type().String())
	}
}

func (f *Filler) slice(v reflect.Value, depth int) {
	if depth >= f.MaxDepth || f.zero() {
		return
	}
	if f.EmptySlices && !f.Full && f.Rand.IntN(4) == 0 {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		return
	}
	n := f.SliceLen
	if n == 0 {
		n = 1 + f.Rand.IntN(3)
	}
	s := reflect.MakeSlice(v.Type(), n, n)
	for i := range n {
		el := s.Index(i)
		switch {
		case el.Kind() == reflect.String && f.Values[el.Type()] == nil: // elements keep even ""
			el.SetString(f.str(false))
			continue
		case el.Kind() == reflect.Pointer: // an element is never nil
			el.Set(reflect.New(el.Type().Elem()))
			el = el.Elem()
		}
		f.value(el, depth+1)
	}
	v.Set(s)
}

// str draws a string; a field's is not empty when Full.
func (f *Filler) str(field bool) string {
	s := f.Strings[f.Rand.IntN(len(f.Strings))]
	if s == "" && field && f.Full {
		s = "full"
	}
	return s
}

func (f *Filler) int() int64 {
	if f.Ints != nil {
		x := f.Ints[f.Rand.IntN(len(f.Ints))]
		if x == 0 && f.Full {
			x = 1
		}
		return x
	}
	return f.Rand.Int64N(1<<40) - 1<<39 | 1
}

func (f *Filler) uint() uint64 {
	if f.Ints != nil {
		return uint64(max(f.int(), -f.int(), 1))
	}
	return f.Rand.Uint64()>>uint(f.Rand.IntN(64)) | 1
}

// Change changes every leaf reachable from *ptr in place, never replacing
// a pointer, slice or map: whatever a copy shares with it shows the change.
func Change(ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic("fill: Change takes a non-nil pointer, got " + v.Type().String())
	}
	change(v.Elem())
}

func change(v reflect.Value) {
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				change(v.Field(i))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			change(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			change(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			change(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		v.SetUint(v.Uint() + 1)
	case reflect.Float64, reflect.Float32:
		v.SetFloat(v.Float() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		panic("fill: cannot change a " + v.Type().String())
	}
}
