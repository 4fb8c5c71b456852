package engine

import (
	"encoding/json"
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
// never committed. Fails when a field is added to RunState (or anything it
// holds) without clone copying it.
func TestRunStateCloneSharesNothing(t *testing.T) {
	var orig, want RunState
	fillAll(reflect.ValueOf(&orig).Elem())
	fillAll(reflect.ValueOf(&want).Elem())
	c := orig.clone()
	if !reflect.DeepEqual(c, &orig) {
		t.Fatalf("clone differs from the original:\n%+v\n%+v", c, &orig)
	}
	changeAll(reflect.ValueOf(c).Elem())
	if !reflect.DeepEqual(&orig, &want) {
		t.Fatal("changing the clone changed the original: clone shares a pointer or slice with it")
	}
}

func TestRecentCacheIsBoundedAndKeepsWhatIsUsed(t *testing.T) {
	c := newRecentCache[int](4)
	for i := range 100 {
		c.put(string(rune('a'+i%26))+string(rune(i)), i)
		if n := c.len(); n > 8 {
			t.Fatalf("after %d puts the cache holds %d entries, more than two generations of 4", i+1, n)
		}
	}
	c = newRecentCache[int](4)
	c.put("hot", 1)
	for i := range 100 {
		c.put(string(rune('A'+i)), i)
		if _, ok := c.get("hot"); !ok {
			t.Fatalf("a key read after every put was evicted after %d puts", i+1)
		}
	}
	c.remove("hot")
	if _, ok := c.get("hot"); ok {
		t.Fatal("removed key still answered")
	}
}

// The outbox entry is built by hand for speed; it must be exactly what
// json.Marshal of an OutboxEntry of an event the engine encoded makes,
// which export workers decode.
func TestOutboxEntry_IsTheJSONOfAnOutboxEntry(t *testing.T) {
	for _, tenant := range []string{"default", `quo"te\back`, "ünï<cødé>&", ""} {
		event, err := json.Marshal(Event{ID: "e", RunID: "r", Seq: 1, Type: "RunStarted", Data: EventData{Reason: "<b>&"}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(OutboxEntry{TenantID: tenant, Event: event})
		if err != nil {
			t.Fatal(err)
		}
		if got := outboxEntry(tenant, event); string(got) != string(want) {
			t.Errorf("tenant %q:\n got %s\nwant %s", tenant, got, want)
		}
	}
}
