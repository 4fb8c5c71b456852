package engine

import (
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/engine/runstate"
)

// The outbox entry is built by hand for speed; it must be exactly what
// json.Marshal of an OutboxEntry of an event the engine encoded makes,
// which export workers decode.
func TestOutboxEntry_IsTheJSONOfAnOutboxEntry(t *testing.T) {
	for _, tenant := range []string{"default", `quo"te\back`, "ünï<cødé>&", ""} {
		event, err := json.Marshal(runstate.Event{ID: "e", RunID: "r", Seq: 1, Type: "RunStarted", Data: runstate.EventData{Reason: "<b>&"}})
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
