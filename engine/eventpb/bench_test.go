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

// BenchmarkCheckEveryType checks a valid event of each type the engine
// emits, in turn.
func BenchmarkCheckEveryType(b *testing.B) {
	var evs []*runstate.Event
	for _, typ := range engineEventTypes {
		ev := validEvent()
		ev.Type, ev.Data = typ, validData(typ)
		if Validate(ev) == nil {
			evs = append(evs, ev)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := Check(evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(len(evs)), "types")
}
