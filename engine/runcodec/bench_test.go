package runcodec

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
)

// benchState is a checkpoint of a 5-step run that completed, the shape the
// benchmark workload leaves.
func benchState() *runstate.State {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	s := &runstate.State{FormatVersion: 1, RunID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", Status: runstate.RunCompleted,
		LastSeq: 24, Epoch: 3, CreatedAt: at, StartedAt: at, CompletedAt: at.Add(time.Second)}
	for _, id := range []string{"s1", "s2", "s3", "s4", "s5"} {
		s.Steps = append(s.Steps, &runstate.StepState{ActionID: id, Status: runstate.StepSucceeded, LogicalAttempt: 1, EngineAttempt: 1,
			Attempts: []runstate.Attempt{{LogicalAttempt: 1, EngineAttempt: 1, Outcome: runstate.AttemptSucceeded, StartedAt: at, CompletedAt: at, WorkerID: "worker-1"}},
			TaskID:   "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0f", ScheduledAt: at, StartedAt: at, CompletedAt: at, Output: json.RawMessage(`{}`)})
		s.CompletionOrder = append(s.CompletionOrder, id)
	}
	return s
}

func benchEvent() *runstate.Event {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return &runstate.Event{Type: runstate.EvStepCompleted, ID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", RunID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e",
		Seq: 9, IdempotencyKey: runstate.IdempotencyKey("r", "s1", 1, runstate.EvStepCompleted, "1", 0), EmittedAt: at,
		EmittedBy: "activity-worker:worker-1", StepID: "s1", LogicalAttempt: 1, PlanVersion: "1",
		Data: runstate.EventData{Status: string(runstate.StepSucceeded), CompletedAt: at, Output: json.RawMessage(`{}`)}}
}

func BenchmarkCheckpoint(b *testing.B) {
	s := benchState()
	js, _ := json.Marshal(s)
	bin := AppendState(nil, s)
	b.Logf("checkpoint: JSON %d bytes, binary %d bytes", len(js), len(bin))
	b.Run("encode/binary", func(b *testing.B) {
		for b.Loop() {
			_ = AppendState(nil, s)
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(s)
		}
	})
	b.Run("decode/binary", func(b *testing.B) {
		for b.Loop() {
			var out runstate.State
			_ = DecodeState(bin, &out)
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		for b.Loop() {
			var out runstate.State
			_ = json.Unmarshal(js, &out)
		}
	})
}

func BenchmarkEvent(b *testing.B) {
	ev := benchEvent()
	js, _ := json.Marshal(ev)
	bin := AppendEvent(nil, ev)
	b.Logf("event: JSON %d bytes, binary %d bytes", len(js), len(bin))
	b.Run("encode/binary", func(b *testing.B) {
		for b.Loop() {
			_ = AppendEvent(nil, ev)
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(ev)
		}
	})
	b.Run("decode/binary", func(b *testing.B) {
		for b.Loop() {
			var out runstate.Event
			_ = DecodeEvent(bin, &out)
		}
	})
	b.Run("json/stored", func(b *testing.B) {
		buf := make([]byte, 0, 3*len(bin)+64)
		for b.Loop() {
			_, _, _ = AppendStoredEventJSON(buf, bin)
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		for b.Loop() {
			var out runstate.Event
			_ = json.Unmarshal(js, &out)
		}
	})
}

// BenchmarkEventGroup stores, decodes and writes as JSON (as the export
// does: each stored form, then its JSON) the events of a step's completion
// in the benchmark workload (benchGroup); per group of four events.
func BenchmarkEventGroup(b *testing.B) {
	evs := benchGroup()
	bin := AppendEventGroup(nil, keyRun(evs), evs)
	b.Logf("a step's event group: %d bytes", len(bin))
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			_ = AppendEventGroup(buf[:0], keyRun(evs), evs)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = DecodeEvents(bin, keyRun(evs), nil)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 8192)
		for b.Loop() {
			out := buf[:0]
			_ = EachStoredEvent(bin, keyRun(evs), func(stored []byte) error {
				var err error
				out, _, err = AppendStoredEventJSON(out, stored)
				return err
			})
		}
	})
}
