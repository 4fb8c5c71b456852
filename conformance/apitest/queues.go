package apitest

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// onQueue is a one-action definition running activity on queue.
func onQueue(queue, activity string) *weftv1.WorkflowDefinition {
	def := oneActivity(activity)
	def.Actions[0].Queue = queue
	return def
}

// describeQueue describes queue as c's tenant sees it.
func describeQueue(t *testing.T, c Clients, queue string) *weftv1.QueueDescription {
	t.Helper()
	res, err := c.Workers.DescribeQueue(context.Background(), connect.NewRequest(&weftv1.DescribeQueueRequest{Queue: queue}))
	require.NoError(t, err)
	return res.Msg.GetQueue()
}

// listedQueue answers the queue named queue in c's ListWorkers, or nil.
func listedQueue(t *testing.T, c Clients, queue string) *weftv1.QueueDescription {
	t.Helper()
	res, err := c.Workers.ListWorkers(context.Background(), connect.NewRequest(&weftv1.ListWorkersRequest{}))
	require.NoError(t, err)
	for _, q := range res.Msg.GetQueues() {
		if q.GetQueue() == queue {
			return q
		}
	}
	return nil
}

// testQueuesListPollers: a worker that polls a queue is listed with its
// identity, last poll and the task it holds; the queue's backlog counts the
// task nobody took and its oldest ready time is when that task became ready.
func testQueuesListPollers(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			queue, activity := uniqueName("q"), uniqueName("apitest")
			submit(t, c, onQueue(queue, activity))
			before := time.Now().Add(-time.Second)
			res, err := c.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
				WorkerId: "apitest-poller", Queue: queue, Activities: []*weftv1.ActivityRegistration{{Name: activity}}, WaitMs: 5000}))
			require.NoError(t, err)
			require.Len(t, res.Msg.GetTasks(), 1)
			waiting := submit(t, c, onQueue(queue, uniqueName("nobody")))

			q := describeQueue(t, c, queue)
			require.Equal(t, queue, q.GetQueue())
			require.EqualValues(t, 1, q.GetBacklog(), "the second run's task waits")
			require.False(t, q.GetBacklogCapped())
			require.False(t, q.GetOldestReadyAt().AsTime().Before(waiting.GetCreatedAt().AsTime()))
			require.Len(t, q.GetPollers(), 1)
			poller := q.GetPollers()[0]
			require.Equal(t, "apitest-poller", poller.GetWorkerId())
			require.True(t, poller.GetLastPollAt().AsTime().After(before))
			require.EqualValues(t, 1, poller.GetInFlightTasks())
			require.Equal(t, []string{activity}, poller.GetActivities())
			listed := listedQueue(t, c, queue)
			require.NotNil(t, listed, "ListWorkers lists the queue")
			require.Equal(t, "apitest-poller", listed.GetPollers()[0].GetWorkerId())

			complete(t, c, res.Msg.GetTasks()[0], nil)
			require.Zero(t, describeQueue(t, c, queue).GetPollers()[0].GetInFlightTasks(), "a report ends the task's flight")

			_, err = c.Workers.DescribeQueue(context.Background(), connect.NewRequest(&weftv1.DescribeQueueRequest{Queue: "not a queue"}))
			RequireInvalidField(t, err, "queue", "string.pattern")
		})
	}
}

// testQueuesTenantIsolation: a tenant sees neither the pollers nor the
// backlog of another tenant's queue.
func testQueuesTenantIsolation(t *testing.T, a, b Clients) {
	queue, activity := uniqueName("q"), uniqueName("apitest")
	submit(t, a, onQueue(queue, uniqueName("nobody")))
	_, err := a.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
		WorkerId: "tenant-a", Queue: queue, Activities: []*weftv1.ActivityRegistration{{Name: activity}}}))
	require.NoError(t, err)
	own := describeQueue(t, a, queue)
	require.EqualValues(t, 1, own.GetBacklog())
	require.Len(t, own.GetPollers(), 1)
	require.NotNil(t, listedQueue(t, a, queue))

	require.Nil(t, listedQueue(t, b, queue), "tenant B listed tenant A's queue")
	other := describeQueue(t, b, queue)
	require.Zero(t, other.GetBacklog(), "tenant B saw tenant A's backlog")
	require.Empty(t, other.GetPollers(), "tenant B saw tenant A's pollers")
	require.Nil(t, other.GetOldestReadyAt())
}
