package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
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

// TestEncodeRun_IsTheRunsJSONWithoutItsDefinition: the stored record a
// submission builds is the JSON of the run without its definition, which
// its plan record holds; storedRun keeps Run's other fields and names, and
// the record decodes back to the run, its definition left to its plan.
func TestEncodeRun_IsTheRunsJSONWithoutItsDefinition(t *testing.T) {
	def := definition.Definition{PlanID: "p<&>", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "act-a", Queue: "q", Timeout: definition.Ms(5000), Input: json.RawMessage(`{"x": "<y>"}`)},
	}}.WithDefaults()
	rec := Run{FormatVersion: RunVersion, RunID: "r", TenantID: "t", ProjectID: "p", EnvironmentID: "e", RunRequestID: "rr",
		SubmittedBy: "alice", TriggerSource: "schedule", Definition: def, Input: json.RawMessage(`{"in":1}`),
		PlanSHA256: "abc", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Priority: 2, ConcurrencyKey: "customer-42",
		Parent: &Parent{RunID: "parent", Step: "s", Logical: 2, Depth: 1}}
	rv := reflect.ValueOf(rec)
	var fields []reflect.StructField
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Fatalf("the test's run does not set %s", rv.Type().Field(i).Name)
		}
		if f := rv.Type().Field(i); f.Name != "Definition" {
			fields = append(fields, f)
		}
	}
	st := reflect.TypeOf(storedRun{})
	if st.NumField() != len(fields) {
		t.Fatalf("storedRun has %d fields, Run %d besides its definition", st.NumField(), len(fields))
	}
	for i := range st.NumField() {
		if a, b := st.Field(i), fields[i]; a.Name != b.Name || a.Tag != b.Tag {
			t.Fatalf("storedRun field %d is %s %q, Run's %s %q", i, a.Name, a.Tag, b.Name, b.Tag)
		}
	}
	got, err := EncodeRun(&rec)
	if err != nil {
		t.Fatal(err)
	}
	without := rec
	without.Definition = definition.Definition{}
	want, err := json.Marshal(&without)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := json.Marshal(definition.Definition{})
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.Replace(want, append(append([]byte(`"definition":`), empty...), ','), nil, 1)
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeRun:\n%s\njson.Marshal without the definition:\n%s", got, want)
	}
	var back Run
	refers, err := DecodeRun("r", got, &back)
	if err != nil || !refers {
		t.Fatalf("DecodeRun: refers %v, %v", refers, err)
	}
	back.Definition = def
	if !reflect.DeepEqual(back, rec) {
		t.Fatalf("decoded %+v, want %+v", back, rec)
	}
}

// TestDecodeRun_ARecordThatHoldsItsDefinitionLoadsWhole: a run record an
// older weftd wrote (testdata/run_v1.json, as it wrote it) holds its
// definition and decodes whole, without its plan record; a record that
// holds one besides its plan SHA-256 is answered with the one it holds.
func TestDecodeRun_ARecordThatHoldsItsDefinitionLoadsWhole(t *testing.T) {
	b, err := os.ReadFile("testdata/run_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	refers, err := DecodeRun("0195f1c2-7c1e-7abc-8def-0123456789ab", b, &r)
	if err != nil || refers {
		t.Fatalf("DecodeRun: refers %v, %v", refers, err)
	}
	if r.FormatVersion != 1 || r.TenantID != "t" || r.Definition.PlanID != "charge" || len(r.Definition.Actions) != 2 ||
		r.Definition.Actions[1].DependsOn[0] != "a" || r.Definition.Actions[0].Retry.MaxAttempts != 3 || r.Priority != 2 ||
		r.PlanSHA256 != "3795a12510b3fbb492c829062755efbf4e0090fff9d9369c5bde095d4475db8e" || r.ConcurrencyKey != "customer-42" {
		t.Fatalf("decoded %+v", r)
	}
	// Its definition is the one its plan SHA-256 names: stored as a plan
	// record, it is the same definition.
	defJSON, err := json.Marshal(r.Definition)
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePlan(EncodePlan(defJSON), r.PlanSHA256)
	if err != nil || !reflect.DeepEqual(p.Definition, r.Definition) {
		t.Fatalf("DecodePlan: %v", err)
	}
}

// TestDecodeRun_RefusesANewerFormatAndARecordNamingNoPlan: a run record of
// a format this build does not know, or one that holds neither a
// definition nor a plan SHA-256, is an error, never a run with an empty
// definition.
func TestDecodeRun_RefusesANewerFormatAndARecordNamingNoPlan(t *testing.T) {
	for _, value := range []string{`{"version":3,"run_id":"r","plan_sha256":"abc"}`, `{"version":2,"run_id":"r"}`, `{"version":2,`} {
		var r Run
		if _, err := DecodeRun("r", []byte(value), &r); err == nil {
			t.Fatalf("DecodeRun(%s) answered no error", value)
		}
	}
}

// TestDecodePlan_AnswersOnlyTheDefinitionItsSHA256Names: a plan record
// decodes to the definition whose canonical JSON it holds when that JSON
// hashes to the SHA-256 asked for; a record of another definition, or of
// a newer format, is refused.
func TestDecodePlan_AnswersOnlyTheDefinitionItsSHA256Names(t *testing.T) {
	a, err := definition.Prepare(definition.Definition{PlanID: "a", PlanVersion: "1", Actions: []definition.Action{{ID: "x", Order: 1, Activity: "act"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := definition.Prepare(definition.Definition{PlanID: "b", PlanVersion: "1", Actions: []definition.Action{{ID: "x", Order: 1, Activity: "act"}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePlan(EncodePlan(a.JSON), a.PlanSHA256)
	if err != nil || !reflect.DeepEqual(p.Definition, a.Definition) {
		t.Fatalf("DecodePlan of its own record: %v", err)
	}
	if _, err := DecodePlan(EncodePlan(b.JSON), a.PlanSHA256); !errors.Is(err, ErrPlanMismatch) {
		t.Fatalf("DecodePlan of another plan's record: %v", err)
	}
	newer := bytes.Replace(EncodePlan(a.JSON), []byte(`"version":1`), []byte(`"version":2`), 1)
	if _, err := DecodePlan(newer, a.PlanSHA256); err == nil {
		t.Fatal("DecodePlan of a newer format answered no error")
	}
}
