package record

import (
	"bytes"
	"testing"
	"time"
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
