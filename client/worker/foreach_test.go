package worker_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// An activity run for an item of a fan-out reads the item and its index
// from its ActivityInfo (docs/semantics.md#for-each); any other activity
// reads none.
func TestActivityInfo_AnItemOfAFanOutHasItsItemAndIndex(t *testing.T) {
	b := setup(t, worker.Options{})
	var mu sync.Mutex
	seen := map[string]worker.ActivityInfo{}
	worker.Register(b.w, "ship", func(ctx context.Context, _ any) (int, error) {
		info := worker.Info(ctx)
		mu.Lock()
		seen[info.ActionID] = info
		mu.Unlock()
		return info.Index * 10, nil
	})
	b.start()
	one3 := uint32(3)
	runID := b.submit(plan(
		&weftv1.Action{Id: "first", Order: 1, Activity: "ship"},
		&weftv1.Action{Id: "lines", Order: 2, Activity: "ship", ForEach: `["a", {"sku": "b"}, 3]`, MaxConcurrency: &one3},
	))
	run := b.await(runID)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	mu.Lock()
	defer mu.Unlock()
	require.False(t, seen["first"].IsItem)
	require.Nil(t, seen["first"].Item)
	for i, want := range []string{`"a"`, `{"sku":"b"}`, `3`} {
		info := seen["lines["+string(rune('0'+i))+"]"]
		require.True(t, info.IsItem, i)
		require.Equal(t, i, info.Index)
		require.JSONEq(t, want, string(info.Item))
	}
	out, err := json.Marshal(step(run, "lines").GetOutput())
	require.NoError(t, err)
	require.JSONEq(t, `[0, 10, 20]`, string(out))
	require.Equal(t, "lines", step(run, "lines[1]").GetParentStep())
	require.Equal(t, uint32(3), step(run, "lines").GetFanOut().GetSucceeded())
}
