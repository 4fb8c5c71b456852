package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/clock"
)

// Options configures a Worker. Zero fields take defaults.
type Options struct {
	// Queue is the task queue polled (default "default").
	Queue string
	// WorkerID identifies this process in attempt evidence (default host-pid).
	WorkerID string
	// Concurrency caps the tasks in flight (default 4).
	Concurrency int
	// PollWait is how long one long poll waits for a task (default 20 s, at most 60 s).
	PollWait time.Duration
	// HeartbeatInterval is how often a task without a heartbeat timeout
	// heartbeats, which is how it learns of a cancellation (default 10 s;
	// negative: never). Tasks with a heartbeat timeout heartbeat at a third of
	// it, or at this interval when that is shorter.
	HeartbeatInterval time.Duration
	// ShutdownTimeout bounds how long in-flight tasks may finish after Run's
	// context ends before they are abandoned (default 30 s).
	ShutdownTimeout time.Duration
	// Logger receives the worker's lines, without payloads (default: discard).
	Logger *slog.Logger
	// TracerProvider makes the span of each traced task's activity, a child
	// of the attempt's span in the run's trace (tracing.go). Nil: the
	// global provider (otel.GetTracerProvider), which records nothing until
	// the program installs one.
	TracerProvider trace.TracerProvider
}

// Defaults.
const (
	DefaultConcurrency       = 4
	DefaultPollWait          = 20 * time.Second
	DefaultHeartbeatInterval = 10 * time.Second
	DefaultShutdownTimeout   = 30 * time.Second
	maxPollWait              = 60 * time.Second
	maxPollBackoff           = 5 * time.Second
)

// WithDefaults answers the options with unset fields defaulted.
func (o Options) WithDefaults() Options {
	if o.Queue == "" {
		o.Queue = "default"
	}
	if o.WorkerID == "" {
		host, _ := os.Hostname()
		o.WorkerID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.PollWait <= 0 {
		o.PollWait = DefaultPollWait
	}
	o.PollWait = min(o.PollWait, maxPollWait)
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	return o
}

// Worker runs registered activities and compensations.
type Worker struct {
	c    *client.Client
	opts Options
	log  *slog.Logger

	mu            sync.Mutex
	started       bool
	activities    map[string]*handler
	compensations map[string]*handler
}

// New answers a worker that takes tasks through c.
func New(c *client.Client, opts Options) *Worker {
	opts = opts.WithDefaults()
	return &Worker{c: c, opts: opts, log: opts.Logger.With(slog.String("worker_id", opts.WorkerID)),
		activities: map[string]*handler{}, compensations: map[string]*handler{}}
}

// ID answers the worker's id.
func (w *Worker) ID() string { return w.opts.WorkerID }

func (w *Worker) add(into map[string]*handler, kind string, h *handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.started:
		panic(fmt.Sprintf("worker: %s %q registered after Run", kind, h.name))
	case h.name == "":
		panic("worker: " + kind + " name is empty")
	case into[h.name] != nil:
		panic(fmt.Sprintf("worker: %s %q registered twice", kind, h.name))
	}
	into[h.name] = h
}

// pollRequest answers the registrations, sorted by name; Run calls it once.
func (w *Worker) pollRequest() *weftv1.PollTasksRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = true
	req := &weftv1.PollTasksRequest{WorkerId: w.opts.WorkerID, Queue: w.opts.Queue,
		WaitMs: uint32(w.opts.PollWait.Milliseconds())}
	for name, h := range w.activities {
		req.Activities = append(req.Activities, &weftv1.ActivityRegistration{Name: name, Verifiable: h.verify != nil})
	}
	sort.Slice(req.Activities, func(i, j int) bool { return req.Activities[i].Name < req.Activities[j].Name })
	for name := range w.compensations {
		req.Compensations = append(req.Compensations, name)
	}
	sort.Strings(req.Compensations)
	return req
}

// ErrShutdownTimeout is answered by Run when tasks were still running
// ShutdownTimeout after its context ended; they were abandoned.
var ErrShutdownTimeout = errors.New("worker: tasks still running at the shutdown timeout were abandoned")

// Run polls and runs tasks until ctx ends, then shuts down gracefully (see
// the package documentation). It answers nil after a clean shutdown.
func (w *Worker) Run(ctx context.Context) error {
	base := w.pollRequest()
	if len(base.Activities) == 0 && len(base.Compensations) == 0 {
		return errors.New("worker: nothing registered")
	}
	// Tasks run and report on taskCtx, which outlives ctx until abandonment.
	taskCtx, abandon := context.WithCancelCause(context.WithoutCancel(ctx))
	defer abandon(errAbandoned)
	slots := newSlots(w.opts.Concurrency)
	var inflight sync.WaitGroup
	w.log.Info("worker started", slog.String("queue", w.opts.Queue), slog.Int("concurrency", w.opts.Concurrency))
	failures := 0
	for {
		n := slots.acquire(ctx)
		if n == 0 {
			break // ctx ended
		}
		req := cloneRequest(base, n)
		res, err := w.c.PollTasks(ctx, req)
		tasks := res.GetTasks()
		slots.release(n - len(tasks))
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			w.log.Warn("poll failed", slog.String("code", client.CodeOf(err)), slog.Any("error", err))
			if clock.Sleep(ctx, min(time.Duration(failures)*200*time.Millisecond, maxPollBackoff)) != nil {
				break
			}
			continue
		}
		failures = 0
		for _, t := range tasks {
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				defer slots.release(1)
				w.runSlot(ctx, taskCtx, base, t)
			}()
		}
	}
	return w.shutdown(&inflight, abandon)
}

// runSlot runs a task in one execution slot, then each task eager dispatch
// hands the slot with its completion, until one comes without a next task.
// Once ctx (Run's) has ended, completions ask for none.
func (w *Worker) runSlot(ctx, taskCtx context.Context, base *weftv1.PollTasksRequest, t *weftv1.Task) {
	queue := []*weftv1.Task{t}
	for len(queue) > 0 {
		var next *weftv1.PollTasksRequest
		if ctx.Err() == nil {
			next = cloneRequest(base, 1)
			next.WaitMs = 0
		}
		t, queue = queue[0], queue[1:]
		queue = append(queue, w.handle(taskCtx, t, next)...)
	}
}

// shutdown waits for in-flight tasks up to the shutdown timeout, then abandons them.
func (w *Worker) shutdown(inflight *sync.WaitGroup, abandon context.CancelCauseFunc) error {
	done := make(chan struct{})
	go func() { inflight.Wait(); close(done) }()
	t := time.NewTimer(w.opts.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-done:
		w.log.Info("worker stopped")
		return nil
	case <-t.C:
		abandon(errAbandoned)
		w.log.Warn("worker stopped; abandoned tasks still running: their claims will time out")
		return ErrShutdownTimeout
	}
}

func cloneRequest(base *weftv1.PollTasksRequest, n int) *weftv1.PollTasksRequest {
	return &weftv1.PollTasksRequest{WorkerId: base.WorkerId, Queue: base.Queue, Activities: base.Activities,
		Compensations: base.Compensations, MaxTasks: uint32(n), WaitMs: base.WaitMs}
}

// slots counts free execution slots.
type slots chan struct{}

func newSlots(n int) slots { return make(slots, n) }

// acquire blocks for one free slot, then takes every other free one; it
// answers how many it took (0 when ctx ended first).
func (s slots) acquire(ctx context.Context) int {
	select {
	case s <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < cap(s) {
		select {
		case s <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

func (s slots) release(n int) {
	for range n {
		<-s
	}
}
