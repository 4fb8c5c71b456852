package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// TestProcess_AKill9DuringFirstSubmissionsLeavesEachRunWithItsPlanOrNeither:
// weftd (Pebble) is killed with SIGKILL while clients submit runs of plans
// it has never seen, each the first of its plan, so each batch carries a
// plan record with its run record. In the store it leaves, every run record
// has its plan record and every plan record a run that refers to it — both
// landed or neither — and, restarted, weftd answers every run it accepted.
func TestProcess_AKill9DuringFirstSubmissionsLeavesEachRunWithItsPlanOrNeither(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("weftd processes: skipped in -short")
	}
	dir := t.TempDir()
	a := startWeftdIn(t, dir)
	var next atomic.Int64
	var mu sync.Mutex
	var accepted []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := next.Add(1)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				res, err := a.Client.SubmitRun(ctx, &weftv1.SubmitRunRequest{RunRequestId: fmt.Sprintf("first-%d", n),
					Definition: &weftv1.WorkflowDefinition{PlanId: fmt.Sprintf("plan-%d", n), PlanVersion: "1",
						Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "act"}}}})
				cancel()
				if err != nil {
					return // weftd is gone
				}
				mu.Lock()
				accepted = append(accepted, res.GetRun().GetRunId())
				mu.Unlock()
			}
		})
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(accepted) >= 40 }, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()
	close(stop)
	wg.Wait()

	st, err := pebblestore.Open(dir, pebblestore.Config{})
	require.NoError(t, err)
	runs, plans := map[string]string{}, map[string]bool{} // run → its plan record's key; plan record keys
	var after []byte
	for {
		res, err := st.Scan(context.Background(), &store.ScanParams{After: after, Limit: store.MaxScanLimit})
		require.NoError(t, err)
		for _, it := range res.Items {
			parts, err := store.SplitKey(it.Key)
			require.NoError(t, err)
			switch {
			case parts[0] == keyspace.Run.Name && len(parts) == 2:
				var r struct {
					Tenant     string          `json:"tenant_id"`
					PlanSHA256 string          `json:"plan_sha256"`
					Definition json.RawMessage `json:"definition"`
				}
				require.NoError(t, json.Unmarshal(it.Value, &r))
				require.Nil(t, r.Definition, "run record %s embeds its definition", parts[1])
				runs[parts[1]] = string(keyspace.Plan.Key(r.Tenant, r.PlanSHA256))
			case parts[0] == keyspace.Plan.Name:
				plans[string(it.Key)] = true
			}
		}
		if res.Next == nil {
			break
		}
		after = res.Next
	}
	require.NoError(t, st.Close())
	referred := map[string]bool{}
	for run, plan := range runs {
		require.True(t, plans[plan], "run %s's plan record is missing", run)
		referred[plan] = true
	}
	for plan := range plans {
		require.True(t, referred[plan], "plan record %s was stored without its run", plan)
	}
	require.Len(t, plans, len(runs), "each run is the one run of its plan")

	b := startWeftdIn(t, dir)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(runs), len(accepted))
	for _, id := range accepted {
		run, err := b.Client.GetRun(context.Background(), id)
		require.NoError(t, err, "accepted run %s", id)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_PENDING, run.GetStatus())
		require.Equal(t, "a", run.GetSteps()[0].GetActionId())
	}
}
