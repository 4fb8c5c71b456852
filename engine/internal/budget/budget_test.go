package budget_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/budget"
	"github.com/weft-dev/weft/engine/runstate"
)

func events(types ...string) []runstate.Event {
	out := make([]runstate.Event, len(types))
	for i, t := range types {
		out[i] = runstate.Event{Type: t}
	}
	return out
}

func TestClassOf_ANeverFailOpenEventBindsTheWholeDecision(t *testing.T) {
	b := budget.Budget{}.WithDefaults()
	cases := []struct {
		name  string
		types []string
		class budget.Class
		which string
	}{
		{"no classified event", []string{runstate.EvRunQueued, runstate.EvStepScheduled}, budget.Observed, ""},
		{"a step's start fails open", []string{runstate.EvStepStarted}, budget.FailOpen, runstate.EvStepStarted},
		{"a step's completion is enforced", []string{runstate.EvStepCompleted}, budget.Enforced, runstate.EvStepCompleted},
		{"enforced wins over fail-open in one batch", []string{runstate.EvStepStarted, runstate.EvStepFailed}, budget.Enforced, runstate.EvStepFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			class, which := b.ClassOf(events(c.types...))
			require.Equal(t, c.class, class)
			require.Equal(t, c.which, which)
		})
	}
}

func TestValidate_RefusesABudgetUnderAMillisecondOrAClassInBothLists(t *testing.T) {
	require.NoError(t, budget.Budget{}.WithDefaults().Validate())
	require.ErrorContains(t, budget.Budget{Limit: time.Microsecond}.Validate(), "at least 1ms")
	both := budget.Budget{Limit: time.Second, FailOpen: []string{runstate.EvStepStarted}, NeverFailOpen: []string{runstate.EvStepStarted}}
	require.ErrorContains(t, both.Validate(), "cannot both fail open and never fail open")
}

// TestCommit_OnlyAnEnforcedCommitIsAbandonedAtTheBudget: an enforced
// decision commits under a context that ends at the budget and is
// abandoned when it ends the commit; a fail-open one gets no deadline, is
// waited for, and is only reported as over the budget.
func TestCommit_OnlyAnEnforcedCommitIsAbandonedAtTheBudget(t *testing.T) {
	b := budget.Budget{Limit: time.Millisecond}.WithDefaults()
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }

	out, err := b.Commit(context.Background(), events(runstate.EvStepCompleted), now, func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		require.True(t, ok, "an enforced commit has the budget's deadline")
		<-ctx.Done()
		return ctx.Err()
	})
	require.Error(t, err)
	require.Equal(t, budget.Enforced, out.Class)
	require.True(t, out.Abandoned)
	require.True(t, out.Exceeded(b, err))

	out, err = b.Commit(context.Background(), events(runstate.EvStepStarted), now, func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		require.False(t, ok, "a fail-open commit is waited for")
		return nil
	})
	require.NoError(t, err)
	require.False(t, out.Abandoned)
	require.True(t, out.Exceeded(b, err), "slower than the budget: logged")

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	out, err = b.Commit(canceled, events(runstate.EvStepCompleted), now, func(ctx context.Context) error { return ctx.Err() })
	require.Error(t, err)
	require.False(t, out.Abandoned, "the caller's own end is not the budget's")
}
