package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/weft-dev/weft/engine/definition"
)

// TestReadyTaskKey_AQueueSortsByWhenReadyThenByDispatchOrder: a queue's
// entries sort by not_before, then by the seq they were dispatched at, and
// the range due at now holds exactly those not after now.
func TestReadyTaskKey_AQueueSortsByWhenReadyThenByDispatchOrder(t *testing.T) {
	at := time.Unix(100, 0)
	keys := [][]byte{
		ReadyTaskKey("t", "q", at, 2, "r/a/1/activity1"),
		ReadyTaskKey("t", "q", at, 10, "r/b/1/activity1"),
		ReadyTaskKey("t", "q", at.Add(time.Millisecond), 1, "r/c/1/activity1"),
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Fatalf("entry %d does not sort before entry %d", i-1, i)
		}
	}
	start, end := ReadyTaskRange("t", "q", at)
	for i, k := range keys {
		due := bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0
		if due != (i < 2) {
			t.Fatalf("entry %d: due %v at %v", i, due, at)
		}
	}
	if other := ReadyTaskKey("t", "q2", at, 1, "x"); bytes.HasPrefix(other, QueuePrefix("t", "q")) {
		t.Fatal("another queue's entry falls under this queue's prefix")
	}
}

// TestTaskPrefix_HoldsEveryTaskOfItsRunAndNoOther: task ids start with the
// run id and "/"; a run whose id extends another's is not under its prefix.
func TestTaskPrefix_HoldsEveryTaskOfItsRunAndNoOther(t *testing.T) {
	if !bytes.HasPrefix(TaskKey("run-1/a/1/activity1"), TaskPrefix("run-1")) {
		t.Fatal("a task of the run is not under its prefix")
	}
	if bytes.HasPrefix(TaskKey("run-10/a/1/activity1"), TaskPrefix("run-1")) {
		t.Fatal("a task of run-10 falls under run-1's prefix")
	}
}

// TestEncodeRun_IsTheRunsJSONByteForByte: the stored record a submission
// builds from its definition's JSON is the JSON of the run, so that a
// reader decodes it as Run; storedRun keeps Run's fields and names.
func TestEncodeRun_IsTheRunsJSONByteForByte(t *testing.T) {
	def := definition.Definition{PlanID: "p<&>", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "act-a", Queue: "q", Timeout: definition.Ms(5000), Input: json.RawMessage(`{"x": "<y>"}`)},
	}}.WithDefaults()
	rec := Run{FormatVersion: Version, RunID: "r", TenantID: "t", ProjectID: "p", EnvironmentID: "e", RunRequestID: "rr",
		SubmittedBy: "alice", TriggerSource: "schedule", Definition: def, Input: json.RawMessage(`{"in": 1}`),
		PlanSHA256: "abc", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Priority: 2, ConcurrencyKey: "customer-42",
		Parent: &Parent{RunID: "parent", Step: "s", Logical: 2, Depth: 1}}
	rv := reflect.ValueOf(rec)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Fatalf("the test's run does not set %s", rv.Type().Field(i).Name)
		}
	}
	st := reflect.TypeOf(storedRun{})
	if st.NumField() != rv.NumField() {
		t.Fatalf("storedRun has %d fields, Run %d", st.NumField(), rv.NumField())
	}
	for i := range st.NumField() {
		if a, b := st.Field(i), rv.Type().Field(i); a.Name != b.Name || a.Tag != b.Tag {
			t.Fatalf("storedRun field %d is %s %q, Run's %s %q", i, a.Name, a.Tag, b.Name, b.Tag)
		}
	}
	defJSON, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodeRun(&rec, defJSON)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeRun:\n%s\njson.Marshal:\n%s", got, want)
	}
}
