package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
)

// bundle is one test's in-process server and a client of it.
type bundle struct {
	t   *testing.T
	url string
	c   *client.Client
}

func setup(t *testing.T) *bundle {
	t.Helper()
	srv := testkit.Start(t, testkit.Options{})
	return &bundle{t: t, url: srv.URL, c: srv.Client}
}

// result is one CLI invocation's outcome.
type result struct {
	code           int
	err            error
	stdout, stderr string
}

// weft runs the CLI in-process against the bundle's server (via $WEFT_URL).
func (b *bundle) weft(args ...string) result {
	b.t.Helper()
	return b.weftCtx(context.Background(), args...)
}

func (b *bundle) weftCtx(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	env := map[string]string{"WEFT_URL": b.url}
	code, err := run(ctx, args, func(k string) string { return env[k] }, &out, &errOut)
	return result{code: code, err: err, stdout: out.String(), stderr: errOut.String()}
}

// ok runs the CLI and requires exit code 0.
func (b *bundle) ok(args ...string) string {
	b.t.Helper()
	r := b.weft(args...)
	require.Equal(b.t, 0, r.code, "weft %s: %v\n%s", strings.Join(args, " "), r.err, r.stderr)
	require.NoError(b.t, r.err)
	return r.stdout
}

// startWorker runs a worker with register's activities until the test ends.
func (b *bundle) startWorker(register func(w *worker.Worker)) {
	b.t.Helper()
	w := worker.New(b.c, worker.Options{WorkerID: "cli-test", PollWait: 200 * time.Millisecond})
	register(w)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.t.Cleanup(func() { cancel(); <-done })
}

func (b *bundle) eventually(runID string, cond func(*weftv1.Run) bool) *weftv1.Run {
	b.t.Helper()
	var run *weftv1.Run
	require.Eventually(b.t, func() bool {
		var err error
		run, err = b.c.GetRun(context.Background(), runID)
		require.NoError(b.t, err)
		return cond(run)
	}, 15*time.Second, 10*time.Millisecond)
	return run
}

func stepOf(run *weftv1.Run, id string) *weftv1.Step {
	for _, s := range run.GetSteps() {
		if s.GetActionId() == id {
			return s
		}
	}
	return nil
}

func statusIs(s weftv1.RunStatus) func(*weftv1.Run) bool {
	return func(r *weftv1.Run) bool { return r.GetStatus() == s }
}

// writeFile writes a temporary file and answers its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}
