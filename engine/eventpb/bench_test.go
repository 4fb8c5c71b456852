package eventpb

import (
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/engine/runstate"
)

// benchEvent is a step's completion, the most frequent event with a payload.
func benchEvent() *runstate.Event {
	ev := validEvent()
	ev.Type = runstate.EvStepCompleted
	ev.Data = runstate.EventData{Status: string(runstate.StepSucceeded), WorkerID: "w1", CompletedAt: ev.EmittedAt,
		Output: json.RawMessage(`{"ok":true}`)}
	return ev
}

func BenchmarkCheck(b *testing.B) {
	ev := benchEvent()
	for b.Loop() {
		if err := Check(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	ev := benchEvent()
	for b.Loop() {
		if err := Validate(ev); err != nil {
			b.Fatal(err)
		}
	}
}
