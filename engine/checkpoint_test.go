package engine

import (
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/engine/runstate"
)

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
