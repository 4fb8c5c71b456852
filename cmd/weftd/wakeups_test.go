package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
	"github.com/weft-dev/weft/wake"
	"github.com/weft-dev/weft/wake/rediswake"
)

func TestOptions_WakeChannelIsValidated(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	_, err := parseOptions([]string{"--wake-channel", "weft wake"}, none, io.Discard)
	require.ErrorContains(t, err, `wake channel must be a Redis channel name without spaces or control characters, or "none"`)
	opts, err := parseOptions(nil, func(k string) string { return map[string]string{"WEFT_WAKE_CHANNEL": "prod:wake"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "prod:wake", opts.cluster.wakeChannel)
}

// TestCluster_WakeupsGoOverRedisOnASQLStoreOnly: a SQL store's cluster wakes
// its processes over Redis by default (and says so at start-up), on the
// channel --wake-channel names; "none" turns that off; the embedded store
// needs none. Opening connects to nothing (go-redis dials lazily).
func TestCluster_WakeupsGoOverRedisOnASQLStoreOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, store, redis, channel string
		want                        string // the channel, "" for none
		log                         string
	}{
		{"sql", "postgresql://weft@db/weft", "", "", rediswake.DefaultChannel, `"wakeups":"redis","channel":"weft:wake"`},
		{"sql, own channel", "postgresql://weft@db/weft", "redis://127.0.0.1:6379/0", "prod:wake", "prod:wake", `"channel":"prod:wake"`},
		{"sql, none", "postgresql://weft@db/weft", "", wakeNone, "", `"wakeups":"in-process"`},
		{"pebble", storePebble, "", "", "", `"wakeups":"in-process"`},
		{"pebble with redis leases", storePebble, "redis://127.0.0.1:6379/0", "", "", `"wakeups":"in-process"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			opts := options{store: tc.store, cluster: clusterOptions{redis: tc.redis, wakeChannel: tc.channel}}
			cl, err := openCluster(opts, slog.New(slog.NewJSONHandler(&logs, nil)))
			require.NoError(t, err)
			defer cl.close()
			require.Contains(t, logs.String(), tc.log)
			if tc.want == "" {
				require.Nil(t, cl.notifier(), "an engine without wake-ups gets a nil Notifier, not a nil pointer")
				return
			}
			require.NotNil(t, cl.wakes)
			require.Equal(t, tc.want, cl.wakes.Channel())
		})
	}
}

// TestCluster_TwoWeftdsWakeEachOtherOverRedis runs two weftd processes on one
// PostgreSQL and a channel of this test's own: both subscribe, a run submitted
// to A publishes its keys (which this test reads off the channel too), a
// worker long-polling B gets the task, and B's /metrics counts the keys it
// received.
func TestCluster_TwoWeftdsWakeEachOtherOverRedis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	rdb := redistest.Require(t)
	ctx := context.Background()
	channel := "weft-test:" + uuid.NewString() + ":wake"
	sub := rdb.Subscribe(ctx, channel)
	defer func() { _ = sub.Close() }()
	heard := sub.Channel()

	store := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), with(store, "--wake-channel", channel)...)
	b := startWeftdIn(t, t.TempDir(), with(store, "--wake-channel", channel)...)
	require.Contains(t, a.Logs(), `"wakeups":"redis","channel":"`+channel+`"`)
	require.Eventually(t, func() bool {
		n, err := rdb.PubSubNumSub(ctx, channel).Result()
		return err == nil && n[channel] == 3 // both weftds and this test
	}, 20*time.Second, 10*time.Millisecond, "both weftds subscribe")

	polled := make(chan *weftv1.PollTasksResponse, 1)
	go func() {
		workers := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), b.URL)
		res, err := workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: "w",
			Activities: []*weftv1.ActivityRegistration{{Name: "wake"}}, WaitMs: 20_000}))
		if err != nil {
			polled <- nil
			return
		}
		polled <- res.Msg
	}()
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	res, err := runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
		Definition: &weftv1.WorkflowDefinition{PlanId: "wake", PlanVersion: "1",
			Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "wake"}}}}))
	require.NoError(t, err)
	runID := res.Msg.GetRun().GetRunId()

	requireHeard(t, heard, runID)
	select {
	case got := <-polled:
		require.NotNil(t, got, "the poll on B failed")
		require.Len(t, got.GetTasks(), 1)
		require.Equal(t, runID, got.GetTasks()[0].GetRunId())
	case <-time.After(30 * time.Second):
		t.Fatal("the long poll on B did not return")
	}
	require.Eventually(t, func() bool { return scrapeSeries(t, b, `weft_wakeup_keys_total{direction="received"}`) > 0 },
		10*time.Second, 50*time.Millisecond, "B counts the keys it received")
	require.Positive(t, scrapeSeries(t, a, `weft_wakeup_publishes_total{result="ok"}`))
}

// requireHeard waits for a wake-up message on the channel naming runID.
func requireHeard(t *testing.T, heard <-chan *redis.Message, runID string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-heard:
			_, keys, err := wake.Decode([]byte(m.Payload))
			require.NoError(t, err)
			for _, k := range keys {
				if strings.Contains(k, runID) {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no wake-up naming run %s was published", runID)
		}
	}
}

// scrapeSeries answers a series's value on d's /metrics, or -1 when absent.
func scrapeSeries(t *testing.T, d *daemon, series string) float64 {
	t.Helper()
	res, err := apitest.HTTPClient().Get(d.URL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return v
}
