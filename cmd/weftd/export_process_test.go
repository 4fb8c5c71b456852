package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestProcess_Kill9MidExportLosesNoEventAndKeepsEachRunsOrder submits runs
// that wait for a signal to weftd in the cluster configuration, signals
// them while its export worker publishes their events, kills it with
// SIGKILL mid-way, and starts another on the same store: every event of
// every run reaches the tenant's Redis stream, the first time in run_seq
// order (at least once: some twice).
func TestProcess_Kill9MidExportLosesNoEventAndKeepsEachRunsOrder(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	rdb := redistest.Require(t)
	flags := testkit.ClusterFlags(t, db)
	stream := flagValue(flags, "--redis-prefix") + "events:default"
	ctx := context.Background()
	a := startWeftdIn(t, t.TempDir(), flags...)
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	ids := submitWaiting(t, runs, 200)
	signals := weftv1connect.NewSignalServiceClient(apitest.HTTPClient(), a.URL)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ids); i += 4 {
				// Some fail once weftd is killed: their runs keep waiting, and
				// the events they did append must still be exported.
				_, _ = signals.SignalRun(ctx, connect.NewRequest(&weftv1.SignalRunRequest{RunId: ids[i], SignalName: "go"}))
			}
		}()
	}
	require.Eventually(t, func() bool {
		n, err := rdb.XLen(ctx, stream).Result()
		return err == nil && n > 300
	}, time.Minute, 5*time.Millisecond, "export under way")
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, a.Wait(), "weftd was killed")
	wg.Wait()

	b := startWeftdIn(t, t.TempDir(), flags...)
	events := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), b.URL)
	want := map[string][]uint64{}
	total := 0
	for _, id := range ids {
		res, err := events.ListEvents(ctx, connect.NewRequest(&weftv1.ListEventsRequest{RunId: id, PageSize: 1000}))
		require.NoError(t, err)
		for _, ev := range res.Msg.GetEvents() {
			want[id] = append(want[id], ev.GetRunSeq())
		}
		total += len(want[id])
	}
	var got map[string][]uint64
	require.Eventually(t, func() bool {
		entries, err := rdb.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			return false
		}
		got = map[string][]uint64{}
		seen := map[string]bool{}
		n := 0
		for _, e := range entries {
			run, seq := fmt.Sprint(e.Values["run_id"]), fmt.Sprint(e.Values["run_seq"])
			if seen[run+"/"+seq] {
				continue
			}
			seen[run+"/"+seq] = true
			var s uint64
			_, _ = fmt.Sscan(seq, &s)
			got[run] = append(got[run], s)
			n++
		}
		return n >= total
	}, 2*time.Minute, 100*time.Millisecond, "every event reaches the stream")
	for _, id := range ids {
		require.Equal(t, want[id], got[id], "run %s: every event, first published in run_seq order", id)
	}
}
