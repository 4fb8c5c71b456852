package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

func TestOptions_StoreDefaultsToPebbleAndAcceptsPostgresURLs(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	opts, err := parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "pebble", opts.store)

	env["WEFT_STORE"] = "postgres://weft@db:5432/weft"
	opts, err = parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "postgres://weft@db:5432/weft", opts.store)

	opts, err = parseOptions([]string{"--store", "postgresql://weft@crdb:26257/weft"}, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "postgresql://weft@crdb:26257/weft", opts.store)
}

func TestOptions_UnknownStoreNamesOnlyTheScheme(t *testing.T) {
	t.Parallel()
	_, err := parseOptions([]string{"--store", "mysql://root:hunter2@db/weft"}, func(string) string { return "" }, io.Discard)
	require.EqualError(t, err, `store must be "pebble" or a postgresql:// URL, got "mysql"`)
	require.NotContains(t, err.Error(), "hunter2")
}

func TestRedactURL_HidesPasswords(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"postgresql://weft:hunter2@db:5432/weft?sslmode=disable": "postgresql://weft:xxxxx@db:5432/weft?sslmode=disable",
		"postgres://db/weft?password=hunter2&user=weft":          "postgres://db/weft?password=xxxxx&user=weft",
		"postgresql://weft@db/weft":                              "postgresql://weft@db/weft",
	}
	for in, want := range cases {
		require.Equal(t, want, redactURL(in))
	}
}

func TestScrub_RemovesTheURLAndPasswordFromErrors(t *testing.T) {
	t.Parallel()
	raw := "postgresql://weft:hunter2@db/weft"
	err := scrub(errors.New("cannot parse `"+raw+"`: failed; password hunter2 rejected"), raw)
	require.NotContains(t, err.Error(), "hunter2")
	require.Contains(t, err.Error(), "postgresql://weft:xxxxx@db/weft")
}

func TestOpenStore_CreatesTheDataDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "data")
	st, err := openStore(context.Background(), options{store: storePebble, dataDir: dir}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Equal(t, "pebble", st.Capabilities().Backend)
	require.NoError(t, st.Close())
}

func TestWeftd_RunsSurviveARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startWeftdIn(t, dir)
	c := apitest.NewClients(d.URL, apitest.Protocols[0])
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1",
			Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}}))
	require.NoError(t, err)
	d.Stop(t)

	d = startWeftdIn(t, dir)
	c = apitest.NewClients(d.URL, apitest.Protocols[2])
	got, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: res.Msg.GetRun().GetRunId()}))
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_PENDING, got.Msg.GetRun().GetStatus())
	require.Contains(t, d.Logs(), `"msg":"weftd store opened","backend":"pebble"`)
}

func TestWeftd_SIGTERMEndsLongPollsAndWatches(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	c := apitest.NewClients(d.URL, apitest.Protocols[2])
	polled := make(chan error, 1)
	go func() {
		_, err := c.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
			WorkerId: "w", Activities: []*weftv1.ActivityRegistration{{Name: "never"}}, WaitMs: 60000}))
		polled <- err
	}()
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1",
			Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}}))
	require.NoError(t, err)
	stream, err := c.Events.WatchEvents(context.Background(), connect.NewRequest(&weftv1.WatchEventsRequest{RunId: res.Msg.GetRun().GetRunId()}))
	require.NoError(t, err)
	require.True(t, stream.Receive())
	// Both the long poll and the watch must be in the server before it stops.
	require.Eventually(t, func() bool { return inFlightRPCs(t, d) >= 2 }, 10*time.Second, 10*time.Millisecond)
	start := time.Now()
	d.Stop(t)
	require.Less(t, time.Since(start), 30*time.Second, "shutdown cut the 60 s long poll short")
	require.NoError(t, <-polled, "a long poll cut short by shutdown answers no tasks")
	for stream.Receive() {
	}
}

// inFlightRPCs reads weft_rpc_in_flight from weftd's /metrics.
func inFlightRPCs(t *testing.T, d *daemon) float64 {
	res, err := apitest.HTTPClient().Get(d.URL + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "weft_rpc_in_flight "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n
		}
	}
	return 0
}

func TestOptions_PebbleCacheIsMiBFromEnvThenFlagAndRefusesNonsense(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	opts, err := parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.EqualValues(t, pebblestore.DefaultCacheBytes, opts.pebbleCache)

	env["WEFT_PEBBLE_CACHE_MIB"] = "32"
	opts, err = parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.EqualValues(t, 32<<20, opts.pebbleCache)
	opts, err = parseOptions([]string{"--pebble-cache-mib", "64"}, getenv, io.Discard)
	require.NoError(t, err)
	require.EqualValues(t, 64<<20, opts.pebbleCache)

	for _, bad := range []string{"0", "-8", "lots", "1e9", "65537"} {
		_, err := parseOptions([]string{"--pebble-cache-mib", bad}, getenv, io.Discard)
		require.ErrorContains(t, err, "pebble cache must be a whole number of MiB between 1 and 65536, got \""+bad+"\"")
	}
}

func TestOptions_SQLMaxConnsAndMigrateComeFromEnvThenFlagAndRefuseNonsense(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	opts, err := parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Zero(t, opts.sql.maxConns, "0: the URL's pool_max_conns, else the store's default")
	require.True(t, opts.sql.migrate)

	env["WEFT_SQL_MAX_CONNS"] = "24"
	env["WEFT_SQL_MIGRATE"] = "false"
	opts, err = parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.EqualValues(t, 24, opts.sql.maxConns)
	require.False(t, opts.sql.migrate)
	opts, err = parseOptions([]string{"--sql-max-conns", "40", "--sql-migrate=true"}, getenv, io.Discard)
	require.NoError(t, err)
	require.EqualValues(t, 40, opts.sql.maxConns)
	require.True(t, opts.sql.migrate)

	for _, bad := range []string{"0", "-1", "many", "1001"} {
		_, err := parseOptions([]string{"--sql-max-conns", bad}, getenv, io.Discard)
		require.ErrorContains(t, err, "sql max conns must be a whole number between 1 and 1000, got \""+bad+"\"")
	}
}

func TestWeftd_RefusesToServeOnAnIncompleteSchemaNamingTheMissingMigration(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	getenv := func(string) string { return "" }
	err := run(context.Background(), []string{"--store", testkit.SchemaURL(t, db.NewSchema(t)), "--sql-migrate=false",
		"--addr", "127.0.0.1:0", "--wake-channel", "none", "--bus", "none"}, getenv, io.Discard)
	require.ErrorContains(t, err, "missing migration 0001_kv.sql")
	var incomplete *sqlstore.SchemaIncompleteError
	require.ErrorAs(t, err, &incomplete)
}
