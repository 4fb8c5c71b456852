package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// noopActivity is the activity every benchmark step runs.
const noopActivity = "bench.noop"

// Measurement is Weft end to end in one configuration at one concurrency.
type Measurement struct {
	// Config is Cluster or Embedded; Clients is C.
	Config  string `json:"config"`
	Clients int    `json:"clients"`
	// FlowControl: every step had a concurrency key and a throttle
	// (flowSteps).
	FlowControl bool `json:"flow_control,omitempty"`
	// Workflows of Steps steps each, all checked COMPLETED, in Seconds.
	Workflows    int     `json:"workflows"`
	Steps        int     `json:"steps_per_workflow"`
	Seconds      float64 `json:"seconds"`
	WorkflowsSec float64 `json:"workflows_per_sec"`
	StepsSec     float64 `json:"steps_per_sec"`
	// Latency is submit to COMPLETED, as the submitting client saw it
	// (client.SubmitAndAwait: SubmitRun waiting for the run to end).
	Latency Latency `json:"latency"`
	// ServerLatency is the run's created_at to completed_at, on weftd's
	// clock (millisecond resolution): Latency without the client's
	// round trips.
	ServerLatency Latency `json:"server_latency"`
	// WeftdCPUSeconds is weftd's user+system CPU time over the timed part;
	// CPUMsPerStep divides it by the steps run.
	WeftdCPUSeconds float64 `json:"weftd_cpu_seconds"`
	CPUMsPerStep    float64 `json:"weftd_cpu_ms_per_step"`
	// HarnessCPUMsPerStep is this process's CPU time per step over the timed
	// part: the clients and workers driving weftd, which share the machine.
	HarnessCPUMsPerStep float64 `json:"harness_cpu_ms_per_step"`
	// ServicesCPUMsPerStep is the CPU time per step of every PostgreSQL and
	// Redis process on the machine over the timed part (near 0 embedded).
	ServicesCPUMsPerStep float64 `json:"services_cpu_ms_per_step"`
	// WeftdPeakRSSMB is weftd's VmHWM at the end, in MiB.
	WeftdPeakRSSMB float64 `json:"weftd_peak_rss_mib"`
	// Ceiling is the raw commit measurement compared against, and
	// StepsPerCommit is StepsSec divided by its commits/s.
	Ceiling        *Ceiling `json:"ceiling,omitempty"`
	StepsPerCommit float64  `json:"steps_per_ceiling_commit"`
}

// workload drives workflows through one weftd.
type workload struct {
	cfg    Config
	client *client.Client
	prefix string
	// flow gives every step a concurrency key and a throttle (flowSteps).
	flow bool
}

// startWorkers runs cfg.Workers worker runtimes for the no-op activity until
// the returned stop is called; stop answers the first worker error.
func (w *workload) startWorkers() (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, w.cfg.Workers)
	for i := range w.cfg.Workers {
		wk := worker.New(w.client, worker.Options{WorkerID: fmt.Sprintf("%s-worker-%d", w.prefix, i),
			Concurrency: w.cfg.WorkerSlots, PollWait: 5 * time.Second, HeartbeatInterval: -1,
			ShutdownTimeout: 10 * time.Second})
		worker.Register(wk, noopActivity, func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
		go func() { errs <- wk.Run(ctx) }()
	}
	return func() error {
		cancel()
		var err error
		for range w.cfg.Workers {
			err = errors.Join(err, <-errs)
		}
		return err
	}
}

// definition is a workflow of S sequential no-op steps.
func (w *workload) definition() *weftv1.WorkflowDefinition {
	def := &weftv1.WorkflowDefinition{PlanId: "bench", PlanVersion: "1"}
	for i := range w.cfg.Steps {
		def.Actions = append(def.Actions, &weftv1.Action{Id: "s" + strconv.Itoa(i+1), Order: uint32(i + 1), Activity: noopActivity})
	}
	if w.flow {
		flowSteps(def)
	}
	return def
}

// flowSteps gives every step of def flow control that never holds a task
// back, so that what is measured is its cost, not its waiting: a
// concurrency key per run (limit 1: a run's steps run one at a time) and
// one throttle shared by every run of the tenant, at a rate far above the
// workload's (docs/semantics.md#step-concurrency, #step-throttle).
func flowSteps(def *weftv1.WorkflowDefinition) {
	for _, a := range def.Actions {
		a.Concurrency = &weftv1.StepConcurrency{Key: "run.id", Limit: 1}
		a.Throttle = &weftv1.StepThrottle{Key: "'bench'", Rate: "1000000/1s", Burst: 10000, Scope: "tenant"}
	}
}

// drive runs n workflows from c concurrent clients, each submitting one and
// waiting for it to complete before the next, and answers each workflow's
// latency. The first workflow that fails or times out ends it with an error.
func (w *workload) drive(ctx context.Context, tag string, n, c int) (client, server []time.Duration, elapsed time.Duration, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	def := w.definition()
	client, server = make([]time.Duration, n), make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(c, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				c, s, err := w.one(ctx, def, fmt.Sprintf("%s-%s-%d", w.prefix, tag, i))
				if err != nil {
					cancel(err)
					return
				}
				client[i], server[i] = c, s
			}
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return nil, nil, 0, err
	}
	return client, server, elapsed, nil
}

// one submits a workflow, waits for it to be terminal and checks it
// completed. It answers the latency the client saw and the server's.
func (w *workload) one(ctx context.Context, def *weftv1.WorkflowDefinition, requestID string) (seen, server time.Duration, err error) {
	run, seen, err := w.complete(ctx, def, requestID)
	if err != nil {
		return 0, 0, err
	}
	return seen, run.GetCompletedAt().AsTime().Sub(run.GetCreatedAt().AsTime()), nil
}

// complete submits a workflow, waits for it to be terminal, checks it
// completed, and answers it and the latency the client saw.
func (w *workload) complete(ctx context.Context, def *weftv1.WorkflowDefinition, requestID string) (*weftv1.Run, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.RunTimeout)
	defer cancel()
	start := time.Now()
	run, err := w.client.SubmitAndAwait(ctx, &weftv1.SubmitRunRequest{Definition: def, Start: true, RunRequestId: requestID})
	elapsed := time.Since(start)
	runID := run.GetRunId()
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, 0, fmt.Errorf("workflow %s did not finish within %s", requestID, w.cfg.RunTimeout)
	case err != nil:
		return nil, 0, fmt.Errorf("submit and await workflow %s: %w", requestID, err)
	case run.GetStatus() != weftv1.RunStatus_RUN_STATUS_COMPLETED:
		return nil, 0, fmt.Errorf("workflow %s (run %s) ended %s, not COMPLETED", requestID, runID, run.GetStatus())
	case len(run.GetSteps()) != w.cfg.Steps:
		return nil, 0, fmt.Errorf("workflow %s (run %s) has %d steps, want %d", requestID, runID, len(run.GetSteps()), w.cfg.Steps)
	}
	for _, step := range run.GetSteps() {
		if step.GetStatus() != weftv1.StepStatus_STEP_STATUS_SUCCEEDED {
			return nil, 0, fmt.Errorf("workflow %s (run %s) completed with step %s %s, not SUCCEEDED", requestID, runID, step.GetActionId(), step.GetStatus())
		}
	}
	return run, elapsed, nil
}
