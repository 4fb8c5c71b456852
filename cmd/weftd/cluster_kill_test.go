package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// slowWorkers starts n workers of activity over the weftds at urls, for the
// tests that kill one of them mid-run: each polls one task at a time from
// its weftd (the other once dead holds the killed one's index; -1 while
// both live), works it for delay, and completes it through any live weftd,
// trying the next on an error; done counts the tasks worked. They stop when
// ctx ends; wait on the answer.
func slowWorkers(ctx context.Context, urls []string, dead *atomic.Int32, activity string, n int, delay time.Duration, done *atomic.Int32) *sync.WaitGroup {
	var wg sync.WaitGroup
	worker := func(w int) {
		defer wg.Done()
		for ctx.Err() == nil {
			i := w % len(urls)
			if int(dead.Load()) == i {
				i = (i + 1) % len(urls)
			}
			workers := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), urls[i])
			res, err := workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: fmt.Sprint("w", w),
				Activities: []*weftv1.ActivityRegistration{{Name: activity}}, MaxTasks: 1, WaitMs: 300}))
			if err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			for _, task := range res.Msg.GetTasks() {
				time.Sleep(delay) // the slow activity
				for try := range 20 {
					j := (i + try) % len(urls)
					if int(dead.Load()) == j {
						continue
					}
					c := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), urls[j])
					_, err := c.CompleteTask(ctx, connect.NewRequest(&weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(), WorkerId: fmt.Sprint("w", w)}))
					if err == nil || connect.CodeOf(err) == connect.CodeFailedPrecondition || connect.CodeOf(err) == connect.CodeNotFound {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				done.Add(1)
			}
		}
	}
	for w := range n {
		wg.Add(1)
		go worker(w)
	}
	return &wg
}

// requireAllCompleted waits until GetRun on the weftd at url answers every
// run of runIDs COMPLETED.
func requireAllCompleted(t *testing.T, ctx context.Context, url string, runIDs []string) {
	t.Helper()
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url)
	require.Eventually(t, func() bool {
		for _, id := range runIDs {
			res, err := runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: id}))
			if err != nil || res.Msg.GetRun().GetStatus() != weftv1.RunStatus_RUN_STATUS_COMPLETED {
				return false
			}
		}
		return true
	}, 3*time.Minute, 100*time.Millisecond, "every run completes on the surviving weftd")
}

// edge is something starting (+1) or ending (-1) at an instant, read from
// an event log.
type edge struct {
	at    time.Time
	delta int
}

// mostAtOnce answers the most of edges' things open at one instant (an end
// before a start at the same instant: the end freed its place) and how many
// are still open after the last edge.
func mostAtOnce(edges []edge) (most, open int) {
	sort.SliceStable(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	for _, e := range edges {
		open += e.delta
		most = max(most, open)
	}
	return most, open
}
