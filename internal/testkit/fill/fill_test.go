package fill

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

type leaf struct {
	S string
	I int
	U uint64
	B bool
	T time.Time
	F float64
}

type tree struct {
	leaf
	Name   string
	P      *leaf
	L      []leaf
	LP     []*leaf
	SS     []string
	M      map[string]leaf
	Raw    json.RawMessage
	Status status
	hidden string
}

type status string

// nonZero reports the first zero leaf reachable from v, or "".
func nonZero(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == timeType {
			if v.Interface().(time.Time).IsZero() {
				return path
			}
			return ""
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if p := nonZero(v.Field(i), path+"."+v.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
		return ""
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if v.IsNil() || (v.Kind() != reflect.Pointer && v.Len() == 0) {
			return path
		}
		if v.Kind() == reflect.Pointer {
			return nonZero(v.Elem(), path)
		}
		if v.Kind() == reflect.Map {
			return ""
		}
		if v.Type().Elem().Kind() == reflect.String {
			return "" // elements may be empty
		}
		for i := range v.Len() {
			if p := nonZero(v.Index(i), path); p != "" {
				return p
			}
		}
		return ""
	default:
		if v.IsZero() {
			return path
		}
		return ""
	}
}

func TestFill_FullSetsEveryExportedField(t *testing.T) {
	for seed := range uint64(200) {
		v := New[tree](Filler{Rand: rand.New(rand.NewPCG(seed, 1)), Full: true,
			Values: map[reflect.Type][]any{reflect.TypeFor[status](): {"A", "B"}}})
		if p := nonZero(reflect.ValueOf(v).Elem(), "tree"); p != "" {
			t.Fatalf("seed %d: %s left zero", seed, p)
		}
		if v.hidden != "" {
			t.Fatal("an unexported field was set")
		}
		if v.Status != "A" && v.Status != "B" {
			t.Fatalf("a type with values of its own got %q", v.Status)
		}
	}
}

func TestFill_WithoutRandIsTheSameEveryTime(t *testing.T) {
	a, b := New[tree](Filler{Full: true}), New[tree](Filler{Full: true})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two fills without a source differ")
	}
}

func TestFill_NotFullLeavesSomeFieldsZero(t *testing.T) {
	zero := 0
	for seed := range uint64(50) {
		if nonZero(reflect.ValueOf(New[tree](Filler{Rand: rand.New(rand.NewPCG(seed, 2))})).Elem(), "") != "" {
			zero++
		}
	}
	if zero == 0 {
		t.Fatal("no fill left a field zero")
	}
}

func TestChange_ChangesEveryLeafInPlace(t *testing.T) {
	orig := New[tree](Filler{Full: true})
	shared := *orig.P
	changed := *orig
	Change(&changed)
	if reflect.DeepEqual(shared, *orig.P) {
		t.Fatal("a pointer's target was not changed in place")
	}
	before := New[tree](Filler{Full: true})
	after := New[tree](Filler{Full: true})
	Change(after)
	bv, av := reflect.ValueOf(before).Elem(), reflect.ValueOf(after).Elem()
	for i := range bv.NumField() {
		if bv.Type().Field(i).IsExported() && reflect.DeepEqual(bv.Field(i).Interface(), av.Field(i).Interface()) {
			t.Fatalf("field %s unchanged", bv.Type().Field(i).Name)
		}
	}
}
