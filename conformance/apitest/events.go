package apitest

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testWatchEvents: WatchEvents streams a run's events in strictly increasing
// run_seq order, each with the payload its event_type names, and ends once
// the run is terminal and every event was sent.
func testWatchEvents(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			run := completedRun(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			stream, err := c.Events.WatchEvents(ctx, connect.NewRequest(&weftv1.WatchEventsRequest{RunId: run.GetRunId()}))
			require.NoError(t, err)
			var events []*weftv1.Event
			for stream.Receive() {
				events = append(events, stream.Msg().GetEvent())
			}
			require.NoError(t, stream.Err())
			require.NotEmpty(t, events)
			requireInRunSeqOrder(t, events)
			require.Equal(t, "RunSubmitted", events[0].GetEventType())
			require.Equal(t, "RunCompleted", events[len(events)-1].GetEventType())
			require.Equal(t, run.GetLastEventSeq(), events[len(events)-1].GetRunSeq())
		})
	}
}

// requireInRunSeqOrder asserts strictly increasing run_seq and a payload on every event.
func requireInRunSeqOrder(t *testing.T, events []*weftv1.Event) {
	t.Helper()
	var last uint64
	for _, ev := range events {
		require.Greater(t, ev.GetRunSeq(), last, "event %s out of order", ev.GetEventType())
		last = ev.GetRunSeq()
		require.NotNil(t, ev.GetPayload(), "event %s has no payload", ev.GetEventType())
	}
}
