package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

func scenarioStats_CountRunsByStatusAndQueueDepthFromIndexes(t *testing.T, b *bundle) {
	b.eng.cfg.Limits.PerTenant = 1
	first := b.submit(seq("a", "b"))
	b.submit(seq("a"))                                                                     // queued: no slot
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a")}) // pending
	require.NoError(t, err)
	stats, err := b.eng.Stats(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, stats.RunsByStatus[runstate.RunRunning])
	require.Equal(t, 1, stats.RunsByStatus[runstate.RunQueued])
	require.Equal(t, 1, stats.RunsByStatus[runstate.RunPending])
	require.Equal(t, 1, stats.QueuedRuns)
	require.Equal(t, 1, stats.ReadyTasks)
	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `2`)
	b.tick() // the queued run takes the freed slot
	stats, err = b.eng.Stats(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, stats.RunsByStatus[runstate.RunCompleted], "run %s", first.RunID)
	require.Equal(t, 1, stats.RunsByStatus[runstate.RunRunning])
	require.Equal(t, 0, stats.RunsByStatus[runstate.RunQueued])
	require.Equal(t, 0, stats.QueuedRuns)
	total := 0
	for _, n := range stats.RunsByStatus {
		total += n
	}
	require.Equal(t, 3, total, "every run is indexed under exactly one status")
}
