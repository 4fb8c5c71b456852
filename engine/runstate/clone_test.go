package runstate

import (
	"reflect"
	"testing"
	"time"
)

var timeType = reflect.TypeOf(time.Time{})

// fillAll sets every field reachable from v to a non-zero value, the same
// every time: two slice elements, allocated pointers.
func fillAll(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(v.Index(i))
		}
	case reflect.String:
		v.SetString("s")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Uint64, reflect.Uint32, reflect.Uint8, reflect.Uint:
		v.SetUint(7)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fillAll: add a case for " + v.Type().String())
	}
}

// changeAll changes every leaf reachable from v in place, without
// replacing any pointer or slice: whatever is shared shows the change.
func changeAll(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				changeAll(v.Field(i))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			changeAll(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			changeAll(v.Index(i))
		}
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(v.Int() + 1)
	case reflect.Uint64, reflect.Uint32, reflect.Uint8, reflect.Uint:
		v.SetUint(v.Uint() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		panic("changeAll: add a case for " + v.Type().String())
	}
}

// A decision changes a clone of the cached checkpoint; if the clone shared
// anything with the cached state, readers would see a decision that was
// never committed. Fails when a field is added to State (or anything it
// holds) without clone copying it.
func TestStateClone_SharesNothing(t *testing.T) {
	var orig, want State
	fillAll(reflect.ValueOf(&orig).Elem())
	fillAll(reflect.ValueOf(&want).Elem())
	c := orig.Clone()
	if !reflect.DeepEqual(c, &orig) {
		t.Fatalf("clone differs from the original:\n%+v\n%+v", c, &orig)
	}
	changeAll(reflect.ValueOf(c).Elem())
	if !reflect.DeepEqual(&orig, &want) {
		t.Fatal("changing the clone changed the original: clone shares a pointer or slice with it")
	}
}

// A clone's steps share one allocation of attempts, one of outputs and one
// of key spans: growing one step's must never write over the next step's.
func TestStateClone_GrowingOneStepLeavesTheNextStepsAlone(t *testing.T) {
	var orig State
	fillAll(reflect.ValueOf(&orig).Elem())
	orig.Steps[0].Output = []byte(`{"a":1}`)
	orig.Steps[1].Output = []byte(`{"b":2}`)
	c := orig.Clone()
	next := c.Steps[1].Clone()
	c.Steps[0].Attempts = append(c.Steps[0].Attempts, Attempt{WorkerID: "grown"})
	c.Steps[0].Keys = append(c.Steps[0].Keys, KeySpan{Types: 99})
	c.Steps[0].Output = append(c.Steps[0].Output, "grown"...)
	if !reflect.DeepEqual(c.Steps[1], next) {
		t.Fatalf("growing step 0's copy changed step 1's:\n%+v\n%+v", c.Steps[1], next)
	}
}

// Clone keeps a nil slice nil and an empty one empty, as slices.Clone does.
func TestStateClone_KeepsNilAndEmptySlicesApart(t *testing.T) {
	orig := State{Steps: []*StepState{{ActionID: "a"}, {ActionID: "b", Attempts: []Attempt{}, Keys: []KeySpan{}, Output: []byte{}}}}
	c := orig.Clone()
	if c.Steps[0].Attempts != nil || c.Steps[0].Keys != nil || c.Steps[0].Output != nil {
		t.Fatal("a nil slice's copy is not nil")
	}
	if c.Steps[1].Attempts == nil || c.Steps[1].Keys == nil || c.Steps[1].Output == nil {
		t.Fatal("an empty slice's copy is nil")
	}
}
