package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/examples/fulfilment"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// consoleE2E is what console/test/e2e.ts reads: the weftds, tokens and runs.
type consoleE2E struct {
	Scenario    string `json:"scenario,omitempty"`
	ClusterURL  string `json:"clusterURL,omitempty"`
	ClusterRun  string `json:"clusterRun,omitempty"`
	AuthURL     string `json:"authURL"`
	AcmeToken   string `json:"acmeToken"`
	CarolToken  string `json:"carolToken"`
	BetaToken   string `json:"betaToken"`
	WrongToken  string `json:"wrongToken"`
	MainRun     string `json:"mainRun"`
	PauseRun    string `json:"pauseRun"`
	CancelRun   string `json:"cancelRun"`
	HoldRun     string `json:"holdRun"`
	DrainRun    string `json:"drainRun"`
	RollbackRun string `json:"rollbackRun"`
	ReleaseURL  string `json:"releaseURL"`
	ResyncURL   string `json:"resyncURL"`
	BetaRun     string `json:"betaRun"`
	Submitter   string `json:"submitter"`
	OpenURL     string `json:"openURL"`
	OpenRun     string `json:"openRun"`
	Shots       string `json:"shots"`
	// CompensateRun is cancelled with compensation; Schedule is acme's
	// schedule and ScheduleRun the run its trigger started.
	CompensateRun string `json:"compensateRun"`
	Schedule      string `json:"schedule"`
	ScheduleRun   string `json:"scheduleRun"`
	// StepsRun has a step its condition skipped and a step that sleeps.
	StepsRun string `json:"stepsRun"`
}

// consoleTestBuild bundles console/test once per test process: the build
// empties console/test-dist first, so a build per test would take the
// bundles from under the parallel tests already running them.
var consoleTestBuild struct {
	once sync.Once
	out  []byte
	err  error
}

// requireConsoleTools answers node, after checking that Chromium and the
// console's npm packages are installed, and bundles console/test.
func requireConsoleTools(t *testing.T) (node, browser string) {
	t.Helper()
	browser = requireChromium(t)
	node = requireTool(t, "node")
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "console", "node_modules", "playwright-core")); err != nil {
		testkit.SkipOrFail(t, "console/node_modules is not installed (run `make tools`)")
	}
	consoleTestBuild.once.Do(func() {
		build := exec.Command(node, "console/build.mjs", "--test")
		build.Dir = root
		consoleTestBuild.out, consoleTestBuild.err = build.CombinedOutput()
	})
	require.NoError(t, consoleTestBuild.err, "node console/build.mjs --test:\n%s", consoleTestBuild.out)
	return node, browser
}

// TestConsole_EventFeedAndGraphRules runs the console's unit tests in Node:
// console/test/feed.test.ts (run_seq order, STALE on a gap, resync until the
// watermark passes it) and console/test/dag.test.ts (the graph's edges and
// layout), console/test/jsoncheck.test.ts (where a JSON input stops being
// JSON, and that it accepts exactly what JSON.parse accepts) and
// console/test/filters.test.ts (the filters as one query for a batch, a
// view's filters kept and given back, a refused query placed at its column)
// and console/test/yamlpath.test.ts (a refused YAML path's line in the text)
// and console/test/fanout.test.ts (a forEach group's items in index order,
// counted as FanOutProgress counts them, and its pages of a filter).
func TestConsole_EventFeedAndGraphRules(t *testing.T) {
	t.Parallel()
	node, _ := requireConsoleTools(t)
	cmd := exec.Command(node, "--test", "console/test-dist/feed.test.mjs", "console/test-dist/dag.test.mjs", "console/test-dist/jsoncheck.test.mjs", "console/test-dist/filters.test.mjs", "console/test-dist/yamlpath.test.mjs", "console/test-dist/fanout.test.mjs")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "# fail 0")
}

// TestConsole_ServesEmbeddedAssetsUnderAStrictCSP: /ui/ answers the embedded
// console with a Content-Security-Policy that allows no inline script, and /
// sends a browser there.
func TestConsole_ServesEmbeddedAssetsUnderAStrictCSP(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(d.URL + "/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, server.ConsolePath, res.Header.Get("Location"))

	for path, contentType := range map[string]string{"/ui/": "text/html", "/ui/app.js": "text/javascript", "/ui/app.css": "text/css"} {
		res, err := http.Get(d.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		require.Contains(t, res.Header.Get("Content-Type"), contentType, path)
		require.NotEmpty(t, body, path)
		csp := res.Header.Get("Content-Security-Policy")
		require.Contains(t, csp, "default-src 'none'", path)
		require.Contains(t, csp, "script-src 'self';", path)
		require.Contains(t, csp, "connect-src 'self';", path)
		require.NotContains(t, csp, "unsafe-", path)
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), path)
	}
	res, err = http.Get(d.URL + "/ui/missing.js")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// TestConsole_EndToEndInChromium clicks through the console in headless
// Chromium against a real weftd with bearer tokens and a real worker (the
// example fulfilment activities), and a second weftd without tokens: a wrong
// token is refused; the list shows submitted runs; a run page draws its DAG
// and timeline; a signal whose payload holds <script> is sent and shown as
// text; a manual step is completed by clicking (after a refused completion
// shows its fault) and the run finishes; a held failed step is retried and
// skipped; a pause shows DRAINING with the task in flight until it ends;
// pause, resume and cancel take effect; a cancel with its compensate box
// ticked rolls back the succeeded step; the schedules page shows a
// schedule's next fire and last run, links to the run, and pauses and
// resumes it after confirmation;
// another tenant sees none of these runs; without tokens the console opens
// directly. Then the API confirms what the clicks did.
func TestConsole_EndToEndInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	root := repoRoot(t)

	const acme, carol, beta = "acme-alice-token-0123456789", "acme-carol-token-0123456789", "beta-bob-token-0123456789ab"
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tokens":[`+
		`{"token":"`+acme+`","tenant":"acme","principal":"alice"},`+
		`{"token":"`+carol+`","tenant":"acme","principal":"carol"},`+
		`{"token":"`+beta+`","tenant":"beta","principal":"bob"}]}`), 0o600))
	d := startWeftdIn(t, t.TempDir(), "--auth-tokens", file)
	open := testkit.StartWeftd(t, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	acmeClient := client.New(d.URL, client.WithToken(acme))
	w := worker.New(acmeClient, worker.Options{Queue: "default", Concurrency: 4, PollWait: 2 * time.Second})
	fulfilment.Register(w, slog.New(slog.NewTextHandler(io.Discard, nil)))
	// console.slow runs until the browser test asks for its release, so that
	// a pause has a task in flight to drain.
	release := make(chan struct{})
	releaser := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		default:
			close(release)
		}
	}))
	t.Cleanup(releaser.Close)
	worker.Register(w, "console.slow", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(workerCtx) }()
	t.Cleanup(func() { stopWorker(); <-workerDone })

	yaml, err := os.ReadFile(filepath.Join(root, "examples", "workflow.yaml"))
	require.NoError(t, err)
	def, err := definition.LoadYAML(yaml)
	require.NoError(t, err)
	submit := func(c *client.Client) string {
		res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: server.DefinitionToProto(def)})
		require.NoError(t, err)
		return res.GetRun().GetRunId()
	}
	// A DAG whose bad-reserve step fails for good (a quantity of 0) and holds the run.
	item := func(q float64) *structpb.Value {
		return structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"sku": structpb.NewStringValue("WIDGET-1"), "quantity": structpb.NewNumberValue(q)}})
	}
	hold, err := acmeClient.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "restock", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "reserve", Order: 1, Activity: "reserve-inventory", Input: item(1)},
			{Id: "bad-reserve", Order: 2, Activity: "reserve-inventory", Input: item(0), OnFailure: weftv1.OnFailure_ON_FAILURE_HOLD},
			{Id: "charge", Order: 3, Activity: "charge-card", DependsOn: []string{"reserve"}, Input: structpb.NewStructValue(&structpb.Struct{
				Fields: map[string]*structpb.Value{"amount_cents": structpb.NewNumberValue(900), "currency": structpb.NewStringValue("EUR")}})},
			{Id: "ship", Order: 4, Activity: "ship-order", DependsOn: []string{"charge", "bad-reserve"}},
		}}})
	require.NoError(t, err)
	// A run whose second step fails for good after the first succeeded: it compensates.
	rollback, err := acmeClient.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "rollback", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "reserve", Order: 1, Activity: "reserve-inventory", Input: item(1),
				Compensation: &weftv1.CompensationHook{Operation: "release-inventory", Input: item(1)}},
			{Id: "bad-reserve", Order: 2, Activity: "reserve-inventory", Input: item(0)},
		}}})
	require.NoError(t, err)
	drain, err := acmeClient.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "drain", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "slow", Order: 1, Activity: "console.slow"},
			{Id: "after", Order: 2, Activity: "ship-order", Input: structpb.NewStructValue(&structpb.Struct{
				Fields: map[string]*structpb.Value{"carrier": structpb.NewStringValue("post")}})},
		}}})
	require.NoError(t, err)
	// A run whose reserve step succeeded (with a compensation hook) and that
	// then waits: cancelled with compensation from the console.
	compensate, err := acmeClient.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "abandon", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "reserve", Order: 1, Activity: "reserve-inventory", Input: item(1),
				Compensation: &weftv1.CompensationHook{Operation: "release-inventory", Input: item(1)}},
			{Id: "wait", Order: 2, WaitForSignal: &weftv1.WaitForSignal{SignalName: "never"}},
		}}})
	require.NoError(t, err)
	// A run whose gift-wrap step its condition skips and whose cool-off step sleeps for an hour.
	steps, err := acmeClient.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true,
		Input: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"giftWrap": structpb.NewBoolValue(false)}}),
		Definition: &weftv1.WorkflowDefinition{PlanId: "gifts", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "reserve", Order: 1, Activity: "reserve-inventory", Input: item(1)},
			{Id: "gift-wrap", Order: 2, Activity: "ship-order", DependsOn: []string{"reserve"}, When: "input.giftWrap"},
			{Id: "cool-off", Order: 3, DependsOn: []string{"reserve"}, SleepMs: proto.Uint32(3_600_000)},
		}}})
	require.NoError(t, err)
	// A yearly schedule, triggered once so that it has a last fire and its run.
	_, err = acmeClient.CreateSchedule(ctx, &weftv1.CreateScheduleRequest{ScheduleId: "nightly-report",
		Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_Cron{Cron: "0 2 * * *"}, TimeZone: "Europe/Berlin"},
		Definition: &weftv1.WorkflowDefinition{PlanId: "report", PlanVersion: "3", Actions: []*weftv1.Action{
			{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}})
	require.NoError(t, err)
	scheduled, err := acmeClient.TriggerSchedule(ctx, "nightly-report", "console-e2e")
	require.NoError(t, err)
	_, err = acmeClient.CreateSchedule(ctx, &weftv1.CreateScheduleRequest{ScheduleId: "hourly-sync", Paused: true,
		Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_IntervalMs{IntervalMs: 3_600_000},
			OverlapPolicy: weftv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE},
		Definition: &weftv1.WorkflowDefinition{PlanId: "sync", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}})
	require.NoError(t, err)
	// The browser reaches weftd through a proxy that makes a gap in the drain run's watch.
	gap := &gapProxy{run: drain.GetRun().GetRunId(), release: make(chan struct{})}
	proxied := httptest.NewServer(gap.handler(t, d.URL))
	t.Cleanup(proxied.Close)
	resyncer := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		select {
		case <-gap.release:
		default:
			close(gap.release)
		}
	}))
	t.Cleanup(resyncer.Close)
	cfg := consoleE2E{
		HoldRun: hold.GetRun().GetRunId(), RollbackRun: rollback.GetRun().GetRunId(), DrainRun: drain.GetRun().GetRunId(), ReleaseURL: releaser.URL,
		ResyncURL: resyncer.URL, AuthURL: proxied.URL, AcmeToken: acme, CarolToken: carol, BetaToken: beta, WrongToken: "not-a-token-of-this-weftd",
		MainRun: submit(acmeClient), PauseRun: submit(acmeClient), CancelRun: submit(acmeClient),
		BetaRun: submit(client.New(d.URL, client.WithToken(beta))), Submitter: "alice",
		OpenURL: open.URL, OpenRun: submit(client.New(open.URL)),
		Shots:         os.Getenv("WEFT_CONSOLE_SHOTS"),
		CompensateRun: compensate.GetRun().GetRunId(), Schedule: "nightly-report", ScheduleRun: scheduled.GetRunId(),
		StepsRun: steps.GetRun().GetRunId(),
	}
	if cfg.Shots == "" {
		cfg.Shots = t.TempDir()
	}
	driveConsole(t, ctx, node, browser, cfg, d)

	// What the clicks did, through the API.
	run, err := acmeClient.GetRun(ctx, cfg.MainRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	for _, s := range run.GetSteps() {
		require.Equal(t, weftv1.StepStatus_STEP_STATUS_SUCCEEDED, s.GetStatus(), s.GetActionId())
	}
	events, err := acmeClient.ListEvents(ctx, &weftv1.ListEventsRequest{RunId: cfg.MainRun, PageSize: 1000})
	require.NoError(t, err)
	var completedBy, signalID string
	for _, e := range events.GetEvents() {
		if mc := e.GetSignalAccepted().GetManualCompletion(); mc != nil {
			completedBy = mc.GetActorUserId()
		}
		if e.GetSignalConsumed() != nil {
			signalID = e.GetSignalConsumed().GetSignalId()
		}
	}
	require.Equal(t, "carol", completedBy, "the manual completion's actor as typed in the console")
	require.Equal(t, "console-e2e-1", signalID, "the signal id as typed in the console")

	paused, err := acmeClient.GetRun(ctx, cfg.PauseRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, paused.GetStatus(), "paused and resumed")
	held, err := acmeClient.GetRun(ctx, cfg.HoldRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, held.GetStatus(), "retried, skipped, completed, then rerun from bad-reserve, which fails again")
	for _, s := range held.GetSteps() {
		if s.GetActionId() == "bad-reserve" {
			require.Equal(t, weftv1.StepStatus_STEP_STATUS_FAILED, s.GetStatus())
			require.Equal(t, uint32(3), s.GetLogicalAttemptId(), "the console's retry opened a second logical attempt, its rerun a third")
			require.Len(t, s.GetAttempts(), 3, "every earlier attempt stays")
		}
	}
	drained, err := acmeClient.GetRun(ctx, cfg.DrainRun)
	require.NoError(t, err)
	require.NotZero(t, gap.droppedSeq(), "the proxy made no gap in the drain run's watch")
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, drained.GetStatus(), "paused while draining, resumed")
	cancelled, err := acmeClient.GetRun(ctx, cfg.CancelRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_CANCELLED, cancelled.GetStatus())
	compensated, err := acmeClient.GetRun(ctx, cfg.CompensateRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_CANCELLED, compensated.GetStatus())
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK, compensated.GetCompensationOutcome(),
		"the cancel's compensate box, ticked in the console")
	sched, err := acmeClient.GetSchedule(ctx, cfg.Schedule, 0)
	require.NoError(t, err)
	require.True(t, sched.GetPaused(), "paused, resumed and paused again from the console")
	require.NotContains(t, d.Logs(), acme, "a token must never be logged")
}

// TestConsole_AnyWeftdOfAClusterServesTheSameRuns: two weftd processes share
// PostgreSQL and Redis; the console served by one shows a run submitted
// through the other, and a signal sent from it finishes the run.
func TestConsole_AnyWeftdOfAClusterServesTheSameRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	node, browser := requireConsoleTools(t)
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), store...)
	b := startWeftdIn(t, t.TempDir(), store...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	viaA := client.New(a.URL)
	res, err := viaA.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "cluster-console", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}},
		}}})
	require.NoError(t, err)
	cfg := consoleE2E{Scenario: "cluster", ClusterURL: b.URL, ClusterRun: res.GetRun().GetRunId(), Shots: t.TempDir()}
	driveConsole(t, ctx, node, browser, cfg, b)

	run, err := viaA.GetRun(ctx, cfg.ClusterRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus(), "the signal sent through b's console, read through a")
}

// driveConsole runs console/test/e2e.ts with cfg and requires it to pass.
func driveConsole(t *testing.T, ctx context.Context, node, browser string, cfg consoleE2E, d *daemon) {
	t.Helper()
	arg, err := json.Marshal(cfg)
	require.NoError(t, err)
	drive := exec.CommandContext(ctx, node, filepath.Join(repoRoot(t), "console/test-dist/e2e.mjs"), string(arg))
	drive.Dir = repoRoot(t)
	drive.Env = append(os.Environ(), "CHROMIUM="+browser)
	out, err := drive.CombinedOutput()
	require.NoError(t, err, "the console end-to-end test:\n%s\nweftd:\n%s", out, tail(d.Logs(), 40))
	t.Logf("%s", out)
}

// runConsoleDriver runs the browser driver console/test-dist/<script>.mjs
// with cfg as its JSON argument and Chromium at browser, requires it to
// succeed (else fails with its stderr and the tail of weftd's log), and
// answers the last line it printed.
func runConsoleDriver(t *testing.T, ctx context.Context, node, browser, script string, cfg any, d *daemon) string {
	t.Helper()
	arg, err := json.Marshal(cfg)
	require.NoError(t, err)
	drive := exec.CommandContext(ctx, node, filepath.Join(repoRoot(t), "console/test-dist", script+".mjs"), string(arg))
	drive.Dir = repoRoot(t)
	drive.Env = append(os.Environ(), "CHROMIUM="+browser)
	var stderr strings.Builder
	drive.Stderr = &stderr
	stdout, err := drive.Output()
	require.NoError(t, err, "the console test %s:\n%s\nweftd:\n%s", script, stderr.String(), tail(d.Logs(), 40))
	return string(lastLine(stdout))
}

// consoleShots is where the browser drivers save their screenshots:
// $WEFT_CONSOLE_SHOTS, else a directory the test removes.
func consoleShots(t *testing.T) string {
	if dir := os.Getenv("WEFT_CONSOLE_SHOTS"); dir != "" {
		return dir
	}
	return t.TempDir()
}

// tail answers the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
