package budget_test

import (
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
