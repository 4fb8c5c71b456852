package runcodec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

// A decision's events store as one group that gives back each event's own
// stored form, in order, whatever their sizes (an event's length prefix
// grows past two bytes); one event stores as its own record.
func TestEventGroup_HoldsEachEventsOwnStoredFormInOrder(t *testing.T) {
	for _, sizes := range [][]int{{0, 0}, {10, 200, 20000}, {100000, 1}} {
		evs := make([]runstate.Event, len(sizes))
		for i, n := range sizes {
			evs[i] = runstate.Event{Type: runstate.EvStepCompleted, RunID: "r", Seq: uint64(i + 1), StepID: strings.Repeat("s", n)}
		}
		b := AppendEventGroup([]byte("prefix"), keyRun(evs), evs)
		require.Equal(t, "prefix", string(b[:6]), "appended to what b held")
		var forms [][]byte
		require.NoError(t, EachStoredEvent(b[6:], "r", func(e []byte) error { forms = append(forms, e); return nil }))
		require.Len(t, forms, len(evs))
		for i := range evs {
			require.Equal(t, AppendEvent(nil, &evs[i]), forms[i], "sizes %v: event %d", sizes, i)
		}
		got, err := DecodeEvents(b[6:], "r", nil)
		require.NoError(t, err)
		require.Equal(t, evs, got)
	}
	one := []runstate.Event{{Type: runstate.EvRunStarted, RunID: "r", Seq: 7}}
	require.Equal(t, AppendEvent(nil, &one[0]), AppendEventGroup(nil, keyRun(one), one))
}

// A record under wf:{run}:ev: that is an event alone — binary, or the JSON
// of an older weftd — reads as that one event.
func TestEachStoredEvent_ASingleRecordIsItsOneEvent(t *testing.T) {
	ev := runstate.Event{Type: runstate.EvRunStarted, RunID: "r", Seq: 3, ID: "e"}
	for _, stored := range [][]byte{AppendEvent(nil, &ev), []byte(`{"event_type":"RunStarted","run_id":"r","run_seq":3,"event_id":"e"}`)} {
		got, err := DecodeEvents(stored, "r", nil)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, ev.Seq, got[0].Seq)
		require.Equal(t, ev.ID, got[0].ID)
	}
}

// A group that is empty, truncated or holds something other than events is
// refused, never half read as events.
func TestEventGroup_AMalformedGroupIsRefused(t *testing.T) {
	good := AppendEventGroup(nil, "r", []runstate.Event{{Type: runstate.EvRunStarted, RunID: "r", Seq: 1}, {Type: runstate.EvRunStarted, RunID: "r", Seq: 2}})
	for name, b := range map[string][]byte{
		"empty":           {FormatEventGroup},
		"truncated":       good[:len(good)-3],
		"an empty event":  {FormatEventGroup, 0x0a, 0x00},
		"a varint":        {FormatEventGroup, 0x08, 0x01},
		"an unknown form": {FormatEventGroup, 0x0a, 0x02, 0xff, 0x01},
	} {
		_, err := DecodeEvents(b, "r", nil)
		require.Error(t, err, name)
	}
	require.Error(t, EachStoredEvent(good, "r", func([]byte) error { return fmt.Errorf("stop") }), "fn's error is answered")
}
