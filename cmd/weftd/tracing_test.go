package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/examples/fulfilment"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/telemetry"
)

// payloadMarkers are strings of the example run's inputs, outputs, signal
// payload and manual notes: none may appear in any span.
var payloadMarkers = []string{"WIDGET-1", "EUR", "rsv-", "trk-", "paid-7f3a9", "stock checked 7f3a9"}

// tracingEnv makes weftd's batches short, so that a test waits little for
// its spans at shutdown.
var tracingEnv = []string{"OTEL_BSP_SCHEDULE_DELAY=50"}

// traced is one example run's setup: the receiver, and the test's own
// trace pipeline (the submitter's and the worker's spans).
type traced struct {
	recv    *otlpReceiver
	process *telemetry.Tracing
}

func newTraced(t *testing.T, ratio float64) *traced {
	t.Helper()
	recv := startOTLPReceiver(t)
	// The worker exports over gRPC; weftd over HTTP (or as the test says).
	process, err := telemetry.NewTracing(context.Background(), telemetry.TracingConfig{Endpoint: recv.grpcURL,
		Protocol: telemetry.ProtocolGRPC, SampleRatio: &ratio, ServiceName: "example-worker",
		Getenv: func(k string) string {
			if k == "OTEL_BSP_SCHEDULE_DELAY" {
				return "50"
			}
			return ""
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = process.Shutdown(context.Background()) })
	return &traced{recv: recv, process: process}
}

// startWorker runs the example's worker against url until the test ends
// or the answered stop is called.
func (tr *traced) startWorker(t *testing.T, url string) func() {
	w := worker.New(client.New(url), worker.Options{WorkerID: "trace-worker", PollWait: time.Second,
		TracerProvider: tr.process.Provider})
	fulfilment.Register(w, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// exampleDefinition is examples/workflow.yaml as the API takes it.
func exampleDefinition(t *testing.T) *weftv1.WorkflowDefinition {
	t.Helper()
	yaml, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "workflow.yaml"))
	require.NoError(t, err)
	def, err := definition.LoadYAML(yaml)
	require.NoError(t, err)
	return server.DefinitionToProto(def)
}

// submitTraced submits the example run under a span of the submitter's, and
// answers the run and the trace it belongs to.
func (tr *traced) submitTraced(t *testing.T, c *client.Client) (string, trace.TraceID) {
	t.Helper()
	ctx, span := tr.process.Provider.Tracer("submitter").Start(context.Background(), "quickstart")
	defer span.End()
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: exampleDefinition(t)})
	require.NoError(t, err)
	return res.GetRun().GetRunId(), span.SpanContext().TraceID()
}

// waitStep waits until the run's step reaches status, and answers it.
func waitStep(t *testing.T, c *client.Client, runID, actionID string, status weftv1.StepStatus) *weftv1.Step {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		run, err := c.GetRun(context.Background(), runID)
		require.NoError(t, err)
		for _, st := range run.GetSteps() {
			if st.GetActionId() == actionID && st.GetStatus() == status {
				return st
			}
		}
		require.True(t, time.Now().Before(deadline), "step %s never reached %s: run %s", actionID, status, run.GetStatus())
		time.Sleep(20 * time.Millisecond)
	}
}

// finishExample sends the payment signal, completes the approval and
// awaits the run's end.
func finishExample(t *testing.T, c *client.Client, runID string) {
	t.Helper()
	ctx := context.Background()
	waitStep(t, c, runID, "payment-confirmed", weftv1.StepStatus_STEP_STATUS_WAITING_FOR_SIGNAL)
	_, err := c.SignalRun(ctx, &weftv1.SignalRunRequest{RunId: runID, SignalName: "payment-confirmed",
		Payload: structpb.NewStringValue("paid-7f3a9")})
	require.NoError(t, err)
	st := waitStep(t, c, runID, "approve-shipment", weftv1.StepStatus_STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION)
	_, err = c.CompleteManualAction(ctx, &weftv1.CompleteManualActionRequest{SchemaVersion: 1, RunId: runID, ActionId: "approve-shipment",
		CompletionToken: st.GetCompletionToken(), Outcome: weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED, ActorUserId: "alice",
		CompletedAt: timestamppb.Now(), Notes: "stock checked 7f3a9"})
	require.NoError(t, err)
	awaitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	run, err := c.AwaitRun(awaitCtx, runID)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
}

// TestTracing_ExampleRunIsOneTraceNestedAsDocumented: the quickstart run,
// with weftd exporting over HTTP and the Go worker over gRPC, is one trace
// under the submitter's span, nested as docs/observability.md draws it.
func TestTracing_ExampleRunIsOneTraceNestedAsDocumented(t *testing.T) {
	t.Parallel()
	tr := newTraced(t, 1)
	d := testkit.StartWeftd(t, tracingEnv, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--otlp-endpoint", tr.recv.httpURL)
	c := client.New(d.URL)
	stopWorker := tr.startWorker(t, d.URL)
	runID, traceID := tr.submitTraced(t, c)
	finishExample(t, c, runID)
	stopWorker()
	d.Stop(t)
	require.NoError(t, tr.process.Shutdown(context.Background()))

	spans := tr.recv.spans()
	if path := os.Getenv("WEFT_TRACE_DUMP"); path != "" { // docs/observability.md's picture is drawn from this
		require.NoError(t, os.WriteFile(path, []byte(renderTree(spans, traceID.String())), 0o644))
	}
	inTrace := requireOneTrace(t, spans, runID, traceID.String())
	byID := map[string]gotSpan{}
	for _, s := range inTrace {
		byID[s.SpanID] = s
	}
	root := only(t, inTrace, func(s gotSpan) bool { return s.Name == "quickstart" })
	submit := only(t, inTrace, func(s gotSpan) bool { return s.Name == "weft.v1.RunService/SubmitRun" })
	require.Equal(t, root.SpanID, submit.Parent, "SubmitRun continues the submitter's span")
	run := only(t, inTrace, func(s gotSpan) bool { return s.Name == server.SpanRun })
	require.Equal(t, submit.SpanID, run.Parent, "the run's span is the submission's child")
	require.Equal(t, runID, run.Attrs["weft.run_id"])
	require.Equal(t, "order-fulfilment", run.Attrs["weft.plan"])
	for step, activity := range map[string]string{"reserve": "reserve-inventory", "charge": "charge-card", "ship": "ship-order"} {
		wait := only(t, inTrace, func(s gotSpan) bool { return s.Name == server.SpanQueueWait && s.Attrs["weft.step"] == step })
		require.Equal(t, run.SpanID, wait.Parent, "%s's queue wait is the run's child", step)
		require.Equal(t, "default", wait.Attrs["weft.queue"])
		attempt := only(t, inTrace, func(s gotSpan) bool { return s.Name == server.SpanAttempt && s.Attrs["weft.step"] == step })
		require.Equal(t, run.SpanID, attempt.Parent, "%s's attempt is the run's child", step)
		require.Equal(t, "completed", attempt.Attrs["weft.outcome"])
		require.Equal(t, "1", attempt.Attrs["weft.attempt"])
		act := only(t, inTrace, func(s gotSpan) bool { return s.Name == worker.SpanActivity+" "+activity })
		require.Equal(t, "example-worker", act.Service)
		require.Equal(t, attempt.SpanID, act.Parent, "the worker's span of %s is its attempt's child", step)
		report := only(t, inTrace, func(s gotSpan) bool {
			return s.Name == "weft.v1.WorkerService/CompleteTask" && s.Parent == act.SpanID
		})
		decision := only(t, inTrace, func(s gotSpan) bool {
			return strings.HasPrefix(s.Name, server.SpanDecision) && s.Parent == report.SpanID
		})
		require.Equal(t, "worker", decision.Attrs["weft.decided_by"])
		commit := only(t, inTrace, func(s gotSpan) bool { return s.Name == server.SpanStoreCommit && s.Parent == decision.SpanID })
		require.LessOrEqual(t, decision.Start, commit.Start)
		require.LessOrEqual(t, commit.End, decision.End)
	}
	signal := only(t, inTrace, func(s gotSpan) bool {
		return s.Name == server.SpanDecision+" SignalAccepted" && strings.Contains(s.Attrs["weft.events"], "SignalConsumed")
	})
	require.Equal(t, run.SpanID, signal.Parent, "a signal from outside the trace is decided under the run, linked to its call")
	require.Len(t, signal.Links, 1)
	for _, s := range inTrace {
		if s.SpanID != root.SpanID {
			_, ok := byID[s.Parent]
			require.True(t, ok, "span %q's parent is in the trace", s.Name)
		}
	}
	requireNoPayload(t, spans)
}

// TestTracing_CrashAndRecoveryKeepTheRunsTraceID: weftd killed while the
// run waits for its signal, and restarted on the same store, continues the
// run in the trace its submission began — the traceparent is kept with the
// run.
func TestTracing_CrashAndRecoveryKeepTheRunsTraceID(t *testing.T) {
	t.Parallel()
	tr := newTraced(t, 1)
	dir := t.TempDir()
	first := testkit.StartWeftd(t, tracingEnv, "--addr", "127.0.0.1:0", "--data-dir", dir, "--otlp-endpoint", tr.recv.httpURL)
	stopFirstWorker := tr.startWorker(t, first.URL)
	runID, traceID := tr.submitTraced(t, client.New(first.URL))
	waitStep(t, client.New(first.URL), runID, "payment-confirmed", weftv1.StepStatus_STEP_STATUS_WAITING_FOR_SIGNAL)
	stopFirstWorker()
	require.NoError(t, first.Cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, first.Wait(), "weftd was killed")

	second := testkit.StartWeftd(t, tracingEnv, "--addr", "127.0.0.1:0", "--data-dir", dir, "--otlp-endpoint", tr.recv.httpURL)
	c := client.New(second.URL)
	stopWorker := tr.startWorker(t, second.URL)
	finishExample(t, c, runID) // no span of the submitter's: the trace comes from the store
	stopWorker()
	second.Stop(t)
	require.NoError(t, tr.process.Shutdown(context.Background()))

	spans := tr.recv.spans()
	requireOneTrace(t, spans, runID, traceID.String())
	ship := only(t, spans, func(s gotSpan) bool { return s.Name == server.SpanAttempt && s.Attrs["weft.step"] == "ship" })
	require.Equal(t, traceID.String(), ship.TraceID, "the attempt after the restart is in the run's trace")
	act := only(t, spans, func(s gotSpan) bool { return s.Name == worker.SpanActivity+" ship-order" })
	require.Equal(t, traceID.String(), act.TraceID)
	require.Equal(t, ship.SpanID, act.Parent)
	requireNoPayload(t, spans)
}

// TestTracing_SampleRatioZeroExportsNothing: with a sample ratio of 0 and
// no sampled caller, the example run leaves no span anywhere — not weftd's,
// not the worker's.
func TestTracing_SampleRatioZeroExportsNothing(t *testing.T) {
	t.Parallel()
	tr := newTraced(t, 0)
	d := testkit.StartWeftd(t, tracingEnv, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--otlp-endpoint", tr.recv.grpcURL, "--otlp-protocol", "grpc", "--trace-sample-ratio", "0")
	c := client.New(d.URL)
	stopWorker := tr.startWorker(t, d.URL)
	res, err := c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Start: true, Definition: exampleDefinition(t)})
	require.NoError(t, err)
	finishExample(t, c, res.GetRun().GetRunId())
	stopWorker()
	d.Stop(t)
	require.NoError(t, tr.process.Shutdown(context.Background()))
	require.Empty(t, tr.recv.spans())
}

// requireOneTrace requires every span naming the run to be in traceID, and
// answers the spans of that trace.
func requireOneTrace(t *testing.T, spans []gotSpan, runID, traceID string) []gotSpan {
	t.Helper()
	var in []gotSpan
	named := 0
	for _, s := range spans {
		if s.Attrs["weft.run_id"] == runID {
			named++
			require.Equal(t, traceID, s.TraceID, "span %q of the run is in another trace", s.Name)
		}
		if s.TraceID == traceID {
			in = append(in, s)
		}
	}
	require.NotZero(t, named, "no span names the run")
	return in
}

// requireNoPayload requires that no span's name, attribute or status
// carries any of the run's inputs, outputs, signal payload or notes.
func requireNoPayload(t *testing.T, spans []gotSpan) {
	t.Helper()
	for _, s := range spans {
		texts := []string{s.Name, s.Status}
		for k, v := range s.Attrs {
			texts = append(texts, k, v)
		}
		for _, text := range texts {
			for _, marker := range payloadMarkers {
				require.NotContains(t, text, marker, "span %q carries a payload", s.Name)
			}
		}
	}
}

// only answers the one span that match selects.
func only(t *testing.T, spans []gotSpan, match func(gotSpan) bool) gotSpan {
	t.Helper()
	var found []gotSpan
	for _, s := range spans {
		if match(s) {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans matching: %v", names(found))
	return found[0]
}

func names(spans []gotSpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// TestOptions_BadTraceFlagsNameTheValue: a sample ratio outside 0..1 or an
// unknown OTLP protocol is refused at start-up, naming what was given.
func TestOptions_BadTraceFlagsNameTheValue(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	_, err := parseOptions([]string{"--trace-sample-ratio", "1.5"}, env, io.Discard)
	require.ErrorContains(t, err, `trace sample ratio must be a number from 0 to 1, got "1.5"`)
	_, err = parseOptions([]string{"--otlp-protocol", "udp"}, env, io.Discard)
	require.ErrorContains(t, err, `otlp protocol must be "http/protobuf" or "grpc", got "udp"`)
	opts, err := parseOptions([]string{"--otlp-endpoint", "http://127.0.0.1:4318", "--trace-sample-ratio", "0.25"}, env, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:4318", opts.tracing.Endpoint)
	require.InDelta(t, 0.25, *opts.tracing.SampleRatio, 0)
}

// TestWeftd_MakeBuildLinksNoHTMLTemplate: weftd as the Makefile builds it
// (its GOFLAGS' build tags) links neither golang.org/x/net/trace nor
// html/template. gRPC, which the OTLP exporters link, imports x/net/trace
// unless built with grpcnotrace, and html/template's reflective method calls
// make the linker keep every exported method of every type: +18 MB of binary
// and of idle RSS with tracing off (docs/observability.md#cost).
func TestWeftd_MakeBuildLinksNoHTMLTemplate(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^export GOFLAGS \?= (.*)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "the Makefile exports no GOFLAGS")
	var tags []string
	for _, f := range strings.Fields(string(m[1])) {
		if v, ok := strings.CutPrefix(f, "-tags="); ok {
			tags = append(tags, v)
		}
	}
	require.Contains(t, tags, "grpcnotrace", "the Makefile's GOFLAGS lack grpcnotrace")
	cmd := exec.Command("go", "list", "-deps", "-tags="+strings.Join(tags, ","), ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", "tracing is in the binary")
	require.NotContains(t, deps, "golang.org/x/net/trace")
	require.NotContains(t, deps, "html/template")
}

// TestTracing_AFailedAttemptsMessageAndInputAreInNoSpan: a step whose
// activity fails for good with a message naming its input leaves spans that
// say it failed and with which class — weftd's attempt and decisions, the
// worker's activity span — and none carries the message or the input.
func TestTracing_AFailedAttemptsMessageAndInputAreInNoSpan(t *testing.T) {
	const secret = "4111-SECRET-7f3a9"
	tr := newTraced(t, 1)
	d := testkit.StartWeftd(t, tracingEnv, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--otlp-endpoint", tr.recv.httpURL)
	c := client.New(d.URL)
	w := worker.New(c, worker.Options{WorkerID: "trace-worker", PollWait: time.Second, TracerProvider: tr.process.Provider})
	worker.Register(w, "charge-secret", func(_ context.Context, in struct{ Card string }) (struct{}, error) {
		return struct{}{}, worker.Fail(worker.ClassValidation, "declined", fmt.Errorf("card %s declined", in.Card))
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	def, err := definition.LoadYAML([]byte("metadata: {name: failing, version: '1'}\nspec:\n  steps:\n" +
		"    - name: charge\n      activity: charge-secret\n      input: {card: " + secret + "}\n"))
	require.NoError(t, err)
	sctx, span := tr.process.Provider.Tracer("submitter").Start(context.Background(), "submit")
	res, err := c.SubmitRun(sctx, &weftv1.SubmitRunRequest{Start: true, Definition: server.DefinitionToProto(def)})
	span.End()
	require.NoError(t, err)
	awaitCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	run, err := c.AwaitRun(awaitCtx, res.GetRun().GetRunId())
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, run.GetStatus())
	require.Contains(t, run.GetSteps()[0].GetError().GetMessage(), secret, "the run keeps the message; its spans must not")
	cancel()
	<-done
	d.Stop(t)
	require.NoError(t, tr.process.Shutdown(context.Background()))

	spans := requireOneTrace(t, tr.recv.spans(), run.GetRunId(), span.SpanContext().TraceID().String())
	attempt := only(t, spans, func(s gotSpan) bool { return s.Name == server.SpanAttempt })
	require.Equal(t, "failed", attempt.Attrs["weft.outcome"])
	act := only(t, spans, func(s gotSpan) bool { return s.Name == worker.SpanActivity+" charge-secret" })
	require.Equal(t, "failed", act.Attrs["weft.outcome"])
	require.Equal(t, "ERROR_CLASS_VALIDATION", act.Attrs["weft.error_class"])
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, act.StatusCode)
	for _, s := range tr.recv.spans() {
		texts := []string{s.Name, s.Status}
		for k, v := range s.Attrs {
			texts = append(texts, k, v)
		}
		for _, text := range texts {
			require.NotContains(t, text, "SECRET", "span %q carries the failure's message or the input", s.Name)
		}
	}
}

// TestTracing_CrashDuringAnAttemptKeepsTheAttemptsSpanAndTheWorkersChild:
// weftd killed (SIGKILL) while a worker runs an attempt, and restarted on
// the same store and address, takes the worker's report: the attempt's span,
// written by the new process, has the span id the claim named, so the
// worker's activity span started before the crash is its child, and the
// report's RPC and decision nest under the activity — one trace throughout.
func TestTracing_CrashDuringAnAttemptKeepsTheAttemptsSpanAndTheWorkersChild(t *testing.T) {
	tr := newTraced(t, 1)
	dir := t.TempDir()
	first := testkit.StartWeftd(t, tracingEnv, "--addr", "127.0.0.1:0", "--data-dir", dir, "--otlp-endpoint", tr.recv.httpURL)
	// The worker's reports outlast the restart.
	c := client.New(first.URL, client.WithRetry(client.RetryPolicy{MaxAttempts: 200, InitialBackoff: 50 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond, Multiplier: 2}))
	started, release := make(chan struct{}), make(chan struct{})
	w := worker.New(c, worker.Options{WorkerID: "trace-worker", PollWait: time.Second, TracerProvider: tr.process.Provider})
	worker.Register(w, "hold", func(context.Context, struct{}) (string, error) {
		close(started)
		<-release
		return "held", nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopWorker := sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stopWorker)
	def, err := definition.LoadYAML([]byte("metadata: {name: crashing, version: '1'}\nspec:\n  steps:\n" +
		"    - name: hold\n      activity: hold\n      timeout: 5m\n"))
	require.NoError(t, err)
	sctx, span := tr.process.Provider.Tracer("submitter").Start(context.Background(), "submit")
	res, err := c.SubmitRun(sctx, &weftv1.SubmitRunRequest{Start: true, Definition: server.DefinitionToProto(def)})
	span.End()
	require.NoError(t, err)
	runID, traceID := res.GetRun().GetRunId(), span.SpanContext().TraceID().String()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the attempt never started")
	}
	require.NoError(t, first.Cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, first.Wait(), "weftd was killed")

	second := testkit.StartWeftd(t, tracingEnv, "--addr", first.Addr, "--data-dir", dir, "--otlp-endpoint", tr.recv.httpURL)
	close(release)
	awaitCtx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	run, err := second.Client.AwaitRun(awaitCtx, runID)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	stopWorker()
	second.Stop(t)
	require.NoError(t, tr.process.Shutdown(context.Background()))

	spans := requireOneTrace(t, tr.recv.spans(), runID, traceID)
	attempt := only(t, spans, func(s gotSpan) bool { return s.Name == server.SpanAttempt })
	require.Equal(t, "completed", attempt.Attrs["weft.outcome"])
	act := only(t, spans, func(s gotSpan) bool { return s.Name == worker.SpanActivity+" hold" })
	require.Equal(t, attempt.SpanID, act.Parent, "the activity's span, begun before the crash, is the child of the attempt's span written after it")
	report := only(t, spans, func(s gotSpan) bool { return s.Name == "weft.v1.WorkerService/CompleteTask" && s.Parent == act.SpanID })
	only(t, spans, func(s gotSpan) bool {
		return strings.HasPrefix(s.Name, server.SpanDecision) && s.Parent == report.SpanID
	})
	requireNoPayload(t, spans)
}
