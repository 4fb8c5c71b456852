package main

// Issue 37, the first hour: each rough edge a new user hit, proved with the
// CLI built from ./cmd/weft as a real process against a real weftd process.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// built answers the directory holding weft and weftd, built from this tree.
func built(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds weft and weftd")
	}
	return testkit.Build(t, "./cmd/weft", "./cmd/weftd")
}

// real is a weftd process and the weft binary pointed at it.
type real struct {
	t   *testing.T
	bin string
	url string
	c   *client.Client
}

// startReal starts weftd (embedded, a temporary data directory, a free
// port) for the test.
func startReal(t *testing.T, args ...string) *real {
	t.Helper()
	bin := built(t)
	w := testkit.StartWeftd(t, nil, args...)
	return &real{t: t, bin: bin, url: w.URL, c: w.Client}
}

// weft runs the weft binary with $WEFT_URL set to the weftd (env adds or
// overrides variables).
func (r *real) weft(args ...string) result {
	r.t.Helper()
	return r.weftEnv([]string{"WEFT_URL=" + r.url}, args...)
}

func (r *real) weftEnv(env []string, args ...string) result {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(r.bin, "weft"), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(r.t, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// ok runs weft and requires exit code 0.
func (r *real) ok(args ...string) string {
	r.t.Helper()
	res := r.weft(args...)
	require.Equal(r.t, 0, res.code, "weft %s:\n%s", strings.Join(args, " "), res.stderr)
	return res.stdout
}

// worker runs an in-process worker with register's activities against the
// weftd until the test ends.
func (r *real) worker(register func(w *worker.Worker)) {
	r.t.Helper()
	w := worker.New(r.c, worker.Options{WorkerID: "firsthour-worker", PollWait: 200 * time.Millisecond})
	register(w)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	r.t.Cleanup(func() { cancel(); <-done })
}

func (r *real) await(runID string, cond func(*weftv1.Run) bool) *weftv1.Run {
	r.t.Helper()
	var run *weftv1.Run
	require.Eventually(r.t, func() bool {
		var err error
		run, err = r.c.GetRun(context.Background(), runID)
		require.NoError(r.t, err)
		return cond(run)
	}, 30*time.Second, 20*time.Millisecond)
	return run
}

func (r *real) file(name, content string) string {
	r.t.Helper()
	return writeFile(r.t, name, content)
}

const approvalYAML = `planId: needs-approval
requiresApproval: true
steps:
  - name: publish
`

// TestFirstHour_SubmitStartQuietPrintsTheRunIDWhenApprovalRefusesTheStart:
// RUN=$(weft submit --start --quiet needs-approval.yaml) keeps the run's id
// although the start is refused; the error says what to do next.
func TestFirstHour_SubmitStartQuietPrintsTheRunIDWhenApprovalRefusesTheStart(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	res := r.weft("submit", "--start", "--quiet", r.file("needs-approval.yaml", approvalYAML))
	require.Equal(t, 1, res.code, res.stderr)
	runID := strings.TrimSpace(res.stdout)
	require.Regexp(t, `^run-[0-9a-f-]+$`, runID, "the run id alone on stdout")
	run, err := r.c.GetRun(context.Background(), runID)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_PENDING, run.GetStatus())
	require.Contains(t, res.stderr, "weft approve "+runID)
	require.Contains(t, res.stderr, "requires approval")

	// -o json and the table print the run too.
	res = r.weft("submit", "--start", "-o", "json", r.file("needs-approval.yaml", approvalYAML))
	require.Equal(t, 1, res.code)
	var out struct {
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
	require.NotEmpty(t, out.Run.RunID)

	// After approval, weft start starts it.
	r.ok("approve", runID)
	require.Contains(t, r.ok("start", runID), "RUNNING")
}

// helpInvocations are every way to ask for help, with the usage line each
// must print.
func helpInvocations() [][]string {
	inv := [][]string{{}, {"--help"}, {"-h"}, {"help"}}
	for _, c := range commands {
		inv = append(inv, []string{c.name, "--help"}, []string{"help", c.name})
	}
	for _, sc := range scheduleCommands {
		inv = append(inv, []string{"schedule", sc.name, "--help"}, []string{"schedule", sc.name, "-h"})
	}
	return inv
}

// TestFirstHour_HelpGoesToStdoutAndExitsZero: weft, weft --help, weft help,
// weft help CMD and every weft CMD --help print on stdout and exit 0,
// without "flag: help requested"; no flag's argument name is a word taken
// from its text; a schedule subcommand's help names the subcommand; the
// top-level list names every schedule subcommand.
func TestFirstHour_HelpGoesToStdoutAndExitsZero(t *testing.T) {
	t.Parallel()
	r := &real{t: t, bin: built(t), url: "http://127.0.0.1:1"}
	for _, args := range helpInvocations() {
		res := r.weft(args...)
		require.Equal(t, 0, res.code, "weft %v: %s", args, res.stderr)
		require.Empty(t, res.stderr, "weft %v", args)
		require.NotContains(t, res.stdout, "help requested", "weft %v", args)
		require.True(t, strings.HasPrefix(res.stdout, "usage: weft"), "weft %v:\n%s", args, res.stdout)
		require.NotRegexp(t, `(?m)^\s+-+\w+ weft\b`, res.stdout, "weft %v: a flag's argument named after a word of its text", args)
		if len(args) == 3 && args[0] == "schedule" {
			require.True(t, strings.HasPrefix(res.stdout, "usage: weft schedule "+args[1]+" "), "weft %v:\n%s", args, res.stdout)
		}
	}
	top := r.ok()
	for _, sc := range scheduleCommands {
		require.Contains(t, top, sc.name, "weft lists schedule %s", sc.name)
	}
	// A usage error names the subcommand's usage, on stderr, exit 2.
	res := r.weft("schedule", "create", "only-an-id")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "usage: weft schedule create ID FILE")
	res = r.weft("get")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "usage: weft get RUN")
}

// TestFirstHour_InvalidDefinitionFileExitsOneWithoutAUsageLine: the command
// line was right; the file was not.
func TestFirstHour_InvalidDefinitionFileExitsOneWithoutAUsageLine(t *testing.T) {
	t.Parallel()
	r := &real{t: t, bin: built(t), url: "http://127.0.0.1:1"}
	res := r.weft("submit", r.file("bad.yaml", "planId: p\nsteps:\n  - name: a\n    timeout: soon\n"))
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "steps[0].timeout")
	require.NotContains(t, res.stderr, "usage:")
	res = r.weft("submit", filepath.Join(t.TempDir(), "missing.yaml"))
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "read the workflow file")
}

// TestFirstHour_AddrWithoutSchemeIsAUsageErrorNamingAddr: not Unavailable.
func TestFirstHour_AddrWithoutSchemeIsAUsageErrorNamingAddr(t *testing.T) {
	t.Parallel()
	r := &real{t: t, bin: built(t)}
	for _, env := range [][]string{{"WEFT_URL=127.0.0.1:7400"}, {"WEFT_URL=http://127.0.0.1:7400"}} {
		args := []string{"list"}
		if env[0] == "WEFT_URL=http://127.0.0.1:7400" {
			args = []string{"--addr", "localhost:7400", "list"}
		}
		res := r.weftEnv(env, args...)
		require.Equal(t, 2, res.code, res.stderr)
		require.Contains(t, res.stderr, "--addr (or $WEFT_URL) must be a URL starting http:// or https://")
		require.NotContains(t, res.stderr, "Unavailable")
	}
}

// TestFirstHour_RefusedConnectionSaysWeftdIsNotRunning: the hint names
// weftd and how to start it, for API calls and for health.
func TestFirstHour_RefusedConnectionSaysWeftdIsNotRunning(t *testing.T) {
	t.Parallel()
	r := &real{t: t, bin: built(t), url: "http://127.0.0.1:1"}
	for _, args := range [][]string{{"list"}, {"get", "run-x"}, {"health"}} {
		res := r.weft(args...)
		require.Equal(t, 1, res.code, "weft %v", args)
		require.Contains(t, res.stderr, "is it running?", "weft %v", args)
		require.Contains(t, res.stderr, "make run", "weft %v", args)
	}
}

// TestFirstHour_EveryCommandsJSONOutputIsJSON: -o json prints JSON for
// every command that answers something, health included.
func TestFirstHour_EveryCommandsJSONOutputIsJSON(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	file := r.file("wait.yaml", "planId: w\nsteps:\n  - name: gate\n    waitForSignal: go\n")
	runID := strings.TrimSpace(r.ok("submit", "--start", "-q", file))
	r.await(runID, func(run *weftv1.Run) bool { return stepOf(run, "gate").GetWaitingForSignal() == "go" })
	for _, args := range [][]string{
		{"health"}, {"list"}, {"get", runID}, {"events", runID}, {"workers"}, {"queue", "default"},
		{"signal", runID, "go", "--payload", `{"ok": true}`},
		{"submit", file}, {"schedule", "create", "s1", file, "--every", "1h"}, {"schedule", "list"},
		{"schedule", "describe", "s1"}, {"schedule", "pause", "s1"}, {"schedule", "resume", "s1"},
		{"schedule", "update", "s1", "--every", "2h"}, {"schedule", "delete", "s1"},
	} {
		out := strings.TrimSpace(r.ok(append(args, "-o", "json")...))
		if args[0] == "events" { // one event per line
			for line := range strings.SplitSeq(out, "\n") {
				require.True(t, json.Valid([]byte(line)), "weft %v -o json printed:\n%s", args, out)
			}
			continue
		}
		require.True(t, json.Valid([]byte(out)), "weft %v -o json printed:\n%s", args, out)
	}
	var health struct {
		Services []struct{ Service, Status string } `json:"services"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.ok("health", "-o", "json")), &health))
	require.Len(t, health.Services, len(services))
	require.Equal(t, "SERVING", health.Services[0].Status)
}

const heldYAML = `planId: held
steps:
  - name: publish
    onFailure: hold
    retryPolicy: {maxAttempts: 1}
  - name: after
    dependsOn: [publish]
`

// TestFirstHour_EventsDetailSaysWhyAnAttemptFailedAndWhyASignalWasRefused,
// and a final error prints its class and code once.
func TestFirstHour_EventsDetailSaysWhyAnAttemptFailedAndWhyASignalWasRefused(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	r.worker(func(w *worker.Worker) {
		worker.Register(w, "publish", func(context.Context, struct{}) (struct{}, error) {
			return struct{}{}, worker.Fail(worker.ClassBusinessConflict, "target_locked", errors.New("the target is locked"))
		})
	})
	runID := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("fail.yaml", "planId: f\nsteps:\n  - name: publish\n    retryPolicy: {maxAttempts: 1}\n")))
	r.await(runID, statusIs(weftv1.RunStatus_RUN_STATUS_FAILED))
	events := r.ok("events", runID)
	attempt := lineWith(t, events, "StepAttemptRecorded")
	require.Contains(t, attempt, "FAILED on firsthour-worker: BUSINESS_CONFLICT target_locked: the target is locked")
	get := r.ok("get", runID)
	require.Equal(t, 1, strings.Count(lineWith(t, get, "error"), "BUSINESS_CONFLICT"), get)
	require.Equal(t, 1, strings.Count(lineWith(t, get, "error"), "target_locked"), get)
	require.Equal(t, 1, strings.Count(lineWith(t, events, "RunFailed"), "BUSINESS_CONFLICT"), events)

	// A manual completion by the run's submitter is refused: its event says why.
	manual := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("manual.yaml", "planId: m\nsteps:\n  - name: review\n    manual: true\n")))
	run := r.await(manual, func(run *weftv1.Run) bool { return stepOf(run, "review").GetCompletionToken() != "" })
	res := r.weft("complete", manual, "review", "--token", stepOf(run, "review").GetCompletionToken(), "--actor", "anonymous")
	require.Equal(t, 1, res.code, res.stderr)
	rejected := lineWith(t, r.ok("events", manual), "SignalRejected")
	require.Regexp(t, `refused: \S`, rejected)
}

// TestFirstHour_GetAndListSayWhyARunWaits: held on a failure (and what
// clears it), a signal's name, a manual step: in weft get's header and in
// weft list's WAITING ON column, so that nine waiting runs and one held run
// are told apart.
func TestFirstHour_GetAndListSayWhyARunWaits(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	r.worker(func(w *worker.Worker) {
		worker.Register(w, "publish", func(context.Context, struct{}) (struct{}, error) {
			return struct{}{}, worker.Fail(worker.ClassBusinessConflict, "target_locked", errors.New("locked"))
		})
	})
	held := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("held.yaml", heldYAML)))
	r.await(held, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	signal := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("wait.yaml", "planId: w\nsteps:\n  - name: gate\n    waitForSignal: payment-confirmed\n")))
	r.await(signal, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	manual := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("manual.yaml", "planId: m\nsteps:\n  - name: review\n    manual: true\n")))
	r.await(manual, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))

	get := r.ok("get", held)
	require.Contains(t, lineWith(t, get, "waiting on"), "held on failure of publish: weft retry-step "+held+" publish, or weft skip-step "+held+" publish")
	require.Contains(t, lineWith(t, r.ok("get", signal), "waiting on"), "signal payment-confirmed (step gate)")
	require.Contains(t, lineWith(t, r.ok("get", manual), "waiting on"), "manual step review")

	list := r.ok("list")
	require.Contains(t, list, "WAITING ON")
	require.Contains(t, lineWith(t, list, held), "held on failure of publish")
	require.Contains(t, lineWith(t, list, signal), "signal payment-confirmed (step gate)")
	require.Contains(t, lineWith(t, list, manual), "manual step review")

	// skip-step clears the hold.
	r.ok("skip-step", held, "publish")
	r.await(held, statusIs(weftv1.RunStatus_RUN_STATUS_COMPLETED))
}

// TestFirstHour_SignalNoStepWaitsForIsRefusedNamingTheRealOne: nothing is
// sent, exit 1, and the name the step waits for is offered.
func TestFirstHour_SignalNoStepWaitsForIsRefusedNamingTheRealOne(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	runID := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("wait.yaml", "planId: w\nsteps:\n  - name: gate\n    waitForSignal: payment-confirmed\n")))
	r.await(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	res := r.weft("signal", runID, "payment-confirmd")
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, `no step waits for signal "payment-confirmd"`)
	require.Contains(t, res.stderr, "did you mean payment-confirmed?")
	require.NotContains(t, r.ok("events", runID), "SignalAccepted", "nothing was sent")
	require.Contains(t, r.ok("signal", runID, "payment-confirmed"), "accepted")
	r.await(runID, statusIs(weftv1.RunStatus_RUN_STATUS_COMPLETED))
	// --any-name sends it anyway.
	other := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("wait.yaml", "planId: w\nsteps:\n  - name: gate\n    waitForSignal: go\n")))
	require.Contains(t, r.ok("signal", other, "later", "--any-name"), "accepted")
}

// TestFirstHour_ScheduleCronFlagErrorNamesTheFlagNotTheFile.
func TestFirstHour_ScheduleCronFlagErrorNamesTheFlagNotTheFile(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	res := r.weft("schedule", "create", "hourly", r.file("wf.yaml", "planId: p\nsteps:\n  - name: a\n"), "--cron", "61 * * * *")
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "the server refused the flags; --cron: ")
	require.NotContains(t, res.stderr, "workflow file")
}

// TestFirstHour_YAMLMistakesAreReportedInYAMLTerms: retry suggests
// retryPolicy, no API name leaks, an indentation mistake names its line.
func TestFirstHour_YAMLMistakesAreReportedInYAMLTerms(t *testing.T) {
	t.Parallel()
	r := &real{t: t, bin: built(t), url: "http://127.0.0.1:1"}
	res := r.weft("submit", r.file("retry.yaml", "planId: p\nsteps:\n  - name: a\n    retry: {maxAttempts: 3}\n  - name: b\n    dependsOn: [\"\"]\n  - name: a\n"))
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, `steps[0].retry: unknown key "retry"; did you mean "retryPolicy"?`)
	require.Contains(t, res.stderr, "steps[1].dependsOn[0]: dependsOn[0] must name a step")
	require.Contains(t, res.stderr, `steps[2].name: name must be unique: "a" is also steps[0].name`)
	require.NotRegexp(t, `depends_on|actions\[|\.id\b`, res.stderr)
	res = r.weft("submit", r.file("indent.yaml", "planId: p\nsteps:\n  - name: a\n    activity: x\n   queue: q\n  - name: b\n"))
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "line 5 is indented 3 spaces")
}

// lineWith answers the first line of out containing s.
func lineWith(t *testing.T, out, s string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	t.Fatalf("no line with %q in:\n%s", s, out)
	return ""
}

// TestFirstHour_MissingActivitySurfacesAtOnceInGetAndQueue: a step whose
// activity no poller of its queue runs says so in weft get while it is
// SCHEDULED, long before the schedule-to-start timeout; weft queue lists the
// activities its pollers run.
func TestFirstHour_MissingActivitySurfacesAtOnceInGetAndQueue(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	r.worker(func(w *worker.Worker) {
		worker.Register(w, "publish", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	})
	require.Eventually(t, func() bool { return strings.Contains(r.ok("queue", "default"), "publish") }, 30*time.Second, 50*time.Millisecond)
	runID := strings.TrimSpace(r.ok("submit", "--start", "-q", r.file("typo.yaml", "planId: t\nsteps:\n  - name: publsh\n")))
	r.await(runID, func(run *weftv1.Run) bool {
		return stepOf(run, "publsh").GetStatus() == weftv1.StepStatus_STEP_STATUS_SCHEDULED
	})
	require.Contains(t, r.ok("get", runID), "no poller of queue default runs activity publsh (weft queue default)")
	require.Contains(t, lineWith(t, r.ok("queue", "default"), "activities run"), "publish")
}
