package engine

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
)

// The write latency budget is proven inside a testing/synctest bubble: the
// engine runs on SystemClock, which there is the bubble's fake clock, and
// the faultstore's delays and the budget's deadline advance it. Nothing
// sleeps in real time and nothing asserts how long anything took.

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func budgetSetup(t *testing.T) (*bundle, *faultstore.Store, *syncBuffer) {
	fs, err := faultstore.New(memstore.New(memstore.Config{}), faultstore.Config{})
	require.NoError(t, err)
	logs := &syncBuffer{}
	b := setupWith(t, fs, func(c *Config) {
		c.Clock = SystemClock{}
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	return b, fs, logs
}

func TestWriteBudget_DefaultsAreSpec004(t *testing.T) {
	cfg := Config{}.WithDefaults()
	require.Equal(t, 3*time.Second, cfg.WriteLatencyBudget)
	require.Equal(t, []string{runstate.EvStepStarted}, cfg.FailOpenEventClasses)
	require.Equal(t, []string{runstate.EvStepCompleted, runstate.EvStepFailed}, cfg.NeverFailOpenEventClasses)
	bad := Config{Store: memstore.New(memstore.Config{}), FailOpenEventClasses: []string{runstate.EvStepCompleted}}.WithDefaults()
	require.ErrorContains(t, bad.validate(), "cannot both fail open and never fail open")
}

func TestWriteBudget_ASlowCriticalReportIsUnavailableWithNothingAppliedAndItsRetryApplies(t *testing.T) {
	for _, report := range []struct {
		name   string
		call   func(*Engine, *bundle, *Task) (*ReportResult, error)
		status runstate.StepStatus
	}{
		{runstate.EvStepCompleted, func(e *Engine, b *bundle, task *Task) (*ReportResult, error) {
			return e.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		}, runstate.StepSucceeded},
		{runstate.EvStepFailed, func(e *Engine, b *bundle, task *Task) (*ReportResult, error) {
			return e.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", ErrorClass: definition.ErrorValidation, Message: "bad"})
		}, runstate.StepFailed},
	} {
		t.Run(report.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, fs, logs := budgetSetup(t)
				run := b.submit(seq("a"))
				task := b.poll("act-a")
				fs.SetDelays(DefaultWriteLatencyBudget+time.Second, 0) // the store answers after the budget

				_, err := report.call(b.eng, b, task)
				require.Equal(t, CodeUnavailable, CodeOf(err))
				require.ErrorContains(t, err, "write latency budget of 3s exceeded recording "+report.name)
				require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("a").Status, "nothing was applied")
				require.NotContains(t, b.eventTypes(run.RunID), report.name)
				require.Contains(t, logs.String(), `"event":"WRITE_LATENCY_BUDGET_EXCEEDED"`)

				fs.SetDelays(0, 0) // the worker retries with the same token
				res, err := report.call(b.eng, b, task)
				require.NoError(t, err)
				require.False(t, res.Duplicate)
				require.Equal(t, report.status, b.run(run.RunID).Step("a").Status)
			})
		})
	}
}

func TestWriteBudget_ASlowAcknowledgementIsUnavailableAndTheRetryIsADuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, fs, _ := budgetSetup(t)
		run := b.submit(seq("a"))
		task := b.poll("act-a")
		fs.SetDelays(0, DefaultWriteLatencyBudget+time.Second) // written, but acknowledged after the budget

		_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.Equal(t, CodeUnavailable, CodeOf(err))
		require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Step("a").Status, "the batch landed whole")

		fs.SetDelays(0, 0)
		res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.NoError(t, err)
		require.True(t, res.Duplicate, "the retry finds the result applied")
		n := 0
		for _, typ := range b.eventTypes(run.RunID) {
			if typ == runstate.EvStepCompleted {
				n++
			}
		}
		require.Equal(t, 1, n, "the result is recorded once")
		require.Equal(t, json.RawMessage(`1`), b.run(run.RunID).Step("a").Output)
	})
}

func TestWriteBudget_ASlowClaimFailsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, fs, logs := budgetSetup(t)
		run := b.submit(seq("a"))
		fs.SetDelays(DefaultWriteLatencyBudget+time.Second, 0)

		task := b.poll("act-a") // the claim (and its StepStarted) waits past the budget and is still handed out
		require.Equal(t, "a", task.ActionID)
		require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("a").Status)
		require.Contains(t, b.eventTypes(run.RunID), runstate.EvStepStarted)
		require.Contains(t, logs.String(), `"budget_class":"fail_open"`)

		fs.SetDelays(0, 0)
		b.complete(task, `1`)
		require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	})
}
