package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestCluster_TwoWeftdsGiveASmallFairnessKeyItsTurn runs two weftd
// processes on one PostgreSQL and Redis, submits 200 tasks of fairness key
// A (20 runs of 10 parallel steps) and then 10 of key B, and claims them
// one at a time from two workers, each polling both weftds in turn: no
// task is handed out twice, every task is claimed, and B's 10 go within the
// first 24 claims (20 in fair order, and one turn early per weftd for a
// pick made on a state the other had just moved; docs/semantics.md#fairness).
func TestCluster_TwoWeftdsGiveASmallFairnessKeyItsTurn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	flags := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), flags...)
	b := startWeftdIn(t, t.TempDir(), flags...)
	urls := []string{a.URL, b.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	activity := "fair.work"
	def := &weftv1.WorkflowDefinition{PlanId: "fair", PlanVersion: "1", Dag: true, Fairness: &weftv1.Fairness{Key: "input.key"}}
	for i := range 10 {
		def.Actions = append(def.Actions, &weftv1.Action{Id: fmt.Sprint("s", i), Order: uint32(i + 1), Activity: activity})
	}
	submit := func(key string, runs int) {
		for i := range runs {
			client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), urls[i%2])
			input, err := structpb.NewValue(map[string]any{"key": key})
			require.NoError(t, err)
			_, err = client.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true, Input: input}))
			require.NoError(t, err)
		}
	}
	submit("A", 20)
	submit("B", 1)

	const total = 210
	var (
		mu    sync.Mutex
		order []string
		seen  = map[string]bool{}
		twice []string
	)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				mu.Lock()
				n := len(order)
				mu.Unlock()
				if n >= total {
					return
				}
				workers := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), urls[(w+i)%2])
				res, err := workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: fmt.Sprint("w", w),
					Activities: []*weftv1.ActivityRegistration{{Name: activity}}, MaxTasks: 1, WaitMs: 100}))
				if err != nil {
					continue
				}
				mu.Lock()
				for _, task := range res.Msg.GetTasks() {
					if seen[task.GetTaskId()] {
						twice = append(twice, task.GetTaskId())
					}
					seen[task.GetTaskId()] = true
					order = append(order, task.GetRunInput().GetStructValue().GetFields()["key"].GetStringValue())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, twice, "no task handed out twice")
	require.Len(t, order, total, "every task claimed")
	b10 := 0
	for _, k := range order[:24] {
		if k == "B" {
			b10++
		}
	}
	require.Equal(t, 10, b10, "B's tasks within the first 24 claims: %v", order[:30])
}
