package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBoundedLabels_ValuesPastTheBoundAreOther: the first max distinct
// values of a label keep their own series; every later one is OtherLabel,
// while the admitted ones stay themselves (docs/observability.md#cardinality).
func TestBoundedLabels_ValuesPastTheBoundAreOther(t *testing.T) {
	b := newBoundedLabels(MaxPlanLabels)
	for i := range MaxPlanLabels {
		require.Equal(t, fmt.Sprint("plan-", i), b.of(fmt.Sprint("plan-", i)))
	}
	require.Equal(t, OtherLabel, b.of("one-too-many"))
	require.Equal(t, OtherLabel, b.of("another"))
	require.Equal(t, "plan-7", b.of("plan-7"), "an admitted value keeps its series")
}

// TestNewObserver_NothingToObserveIsNil: with tracing and metrics both off
// there is no observer, so the engine calls nothing.
func TestNewObserver_NothingToObserveIsNil(t *testing.T) {
	o, err := NewObserver(nil, nil)
	require.NoError(t, err)
	require.Nil(t, o)
}
