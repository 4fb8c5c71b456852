package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// nobodyJSON is a workflow whose activity no worker of these tests handles.
const nobodyJSON = `{"plan_id": "nobody", "plan_version": "1", "actions": [
  {"id": "a", "order": 1, "activity": "unhandled"}]}`

// TestWorkers_ListsEachQueuesPollersBacklogAndOldestReadyAge: `weft workers`
// shows the queue whose task nobody takes with its backlog and waiting time
// beside the worker that polls it for other activities; `weft queue NAME`
// describes the same queue, and both answer proto JSON with --output json.
func TestWorkers_ListsEachQueuesPollersBacklogAndOldestReadyAge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.startWorker(func(w *worker.Worker) {
		worker.Register(w, "other", func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	})
	b.submitFile("def.json", nobodyJSON, "--start")
	require.Eventually(t, func() bool {
		res, err := b.c.DescribeQueue(context.Background(), &weftv1.DescribeQueueRequest{})
		require.NoError(t, err)
		return res.GetQueue().GetBacklog() == 1 && len(res.GetQueue().GetPollers()) == 1
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(5 * time.Millisecond) // the oldest task's age is at least a millisecond

	out := b.ok("workers")
	require.Regexp(t, `(?m)^QUEUE\s+BACKLOG\s+OLDEST READY\s+POLLERS$`, out)
	require.Regexp(t, `(?m)^default\s+1\s+\S+\s+1$`, out)
	require.Regexp(t, `(?m)^default\s+cli-test\s+\S+.*\s+0\s+other$`, out)

	var list weftv1.ListWorkersResponse
	require.NoError(t, protojson.Unmarshal([]byte(b.ok("workers", "--output", "json")), &list))
	require.Len(t, list.GetQueues(), 1)
	q := list.GetQueues()[0]
	require.Equal(t, "default", q.GetQueue())
	require.EqualValues(t, 1, q.GetBacklog())
	require.NotNil(t, q.GetOldestReadyAt())
	require.Positive(t, q.GetOldestReadyAgeMs())
	require.Len(t, q.GetPollers(), 1)
	require.Equal(t, "cli-test", q.GetPollers()[0].GetWorkerId())
	require.Equal(t, []string{"other"}, q.GetPollers()[0].GetActivities())

	out = b.ok("queue", "default")
	require.Regexp(t, `(?m)^backlog\s+1$`, out)
	require.Regexp(t, `(?m)^pollers\s+1$`, out)
	require.Contains(t, out, "cli-test")
	var desc weftv1.DescribeQueueResponse
	require.NoError(t, protojson.Unmarshal([]byte(b.ok("queue", "default", "-o", "json")), &desc))
	require.EqualValues(t, 1, desc.GetQueue().GetBacklog())

	empty := b.ok("queue", "nothing-here")
	require.Regexp(t, `(?m)^backlog\s+0$`, empty)
	require.Regexp(t, `(?m)^oldest ready\s+none$`, empty)
}

// TestQueue_WithoutANameOrWithAnInvalidOne_IsAUsageOrArgumentError: the
// queue's name is required (exit 2) and checked by the server's rule (exit 1,
// naming the field).
func TestQueue_WithoutANameOrWithAnInvalidOne_IsAUsageOrArgumentError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.weft("queue")
	require.Equal(t, 2, r.code)
	require.ErrorContains(t, r.err, "usage: weft queue NAME")
	r = b.weft("queue", "bad name")
	require.Equal(t, 1, r.code, r.stderr)
	require.ErrorContains(t, r.err, "queue")
}
