package worker_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
)

// bundle is one test's server, client and worker.
type bundle struct {
	t *testing.T
	c *client.Client
	w *worker.Worker
	// polls counts the PollTasks calls the server received.
	polls *atomic.Int64
}

// setup serves a fresh in-process weftd and answers a client and an
// unstarted worker.
func setup(t *testing.T, opts worker.Options) *bundle {
	t.Helper()
	polls := &atomic.Int64{}
	srv := testkit.Start(t, testkit.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/PollTasks") {
				polls.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}})
	if opts.PollWait == 0 {
		opts.PollWait = 200 * time.Millisecond
	}
	if opts.WorkerID == "" {
		opts.WorkerID = "test-worker"
	}
	return &bundle{t: t, c: srv.Client, w: worker.New(srv.Client, opts), polls: polls}
}

// start runs the worker until the test ends and answers a stop function
// that shuts it down and answers Run's error.
func (b *bundle) start() func() error {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.w.Run(ctx) }()
	var stopped error
	once := false
	stop := func() error {
		if !once {
			once = true
			cancel()
			stopped = <-errc
		}
		return stopped
	}
	b.t.Cleanup(func() { _ = stop() })
	return stop
}

func (b *bundle) submit(def *weftv1.WorkflowDefinition) string {
	b.t.Helper()
	res, err := b.c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Definition: def, Start: true})
	require.NoError(b.t, err)
	return res.GetRun().GetRunId()
}

// await waits for the run to end and answers its final snapshot.
func (b *bundle) await(runID string) *weftv1.Run {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	run, err := b.c.AwaitRun(ctx, runID)
	require.NoError(b.t, err)
	return run
}

func (b *bundle) eventually(runID string, cond func(*weftv1.Run) bool) *weftv1.Run {
	b.t.Helper()
	var run *weftv1.Run
	require.Eventually(b.t, func() bool {
		var err error
		run, err = b.c.GetRun(context.Background(), runID)
		require.NoError(b.t, err)
		return cond(run)
	}, 10*time.Second, 10*time.Millisecond)
	return run
}

func plan(actions ...*weftv1.Action) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "plan", PlanVersion: "1", Actions: actions}
}

func step(run *weftv1.Run, id string) *weftv1.Step {
	for _, s := range run.GetSteps() {
		if s.GetActionId() == id {
			return s
		}
	}
	return nil
}

func one(n uint32) *uint32 { return &n }
