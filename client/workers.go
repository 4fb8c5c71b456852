package client

import (
	"context"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// The worker RPCs. Most programs use client/worker, which calls these.

// PollTasks long-polls for tasks. It is not retried: a lost answer's claims
// time out and their tasks are handed out again.
func (c *Client) PollTasks(ctx context.Context, req *weftv1.PollTasksRequest) (*weftv1.PollTasksResponse, error) {
	return unary(ctx, c, false, req, c.workers.PollTasks)
}

// CompleteTask reports a result; retried, since a repeated report of the same
// claim answers duplicate.
func (c *Client) CompleteTask(ctx context.Context, req *weftv1.CompleteTaskRequest) (*weftv1.CompleteTaskResponse, error) {
	return unary(ctx, c, true, req, c.workers.CompleteTask)
}

// FailTask reports a failure; retried, since a repeated report of the same
// claim answers duplicate.
func (c *Client) FailTask(ctx context.Context, req *weftv1.FailTaskRequest) (*weftv1.FailTaskResponse, error) {
	return unary(ctx, c, true, req, c.workers.FailTask)
}

// HeartbeatTask keeps a claim alive. It is not retried: the next heartbeat is
// the retry.
func (c *Client) HeartbeatTask(ctx context.Context, req *weftv1.HeartbeatTaskRequest) (*weftv1.HeartbeatTaskResponse, error) {
	return unary(ctx, c, false, req, c.workers.HeartbeatTask)
}

// ReportVerification answers a verify task; retried, since a repeated report
// of the same claim answers duplicate.
func (c *Client) ReportVerification(ctx context.Context, req *weftv1.ReportVerificationRequest) (*weftv1.ReportVerificationResponse, error) {
	return unary(ctx, c, true, req, c.workers.ReportVerification)
}

// ListWorkers describes the caller's queues: pollers, backlog and the oldest
// ready task's age; retried, since it changes nothing.
func (c *Client) ListWorkers(ctx context.Context, req *weftv1.ListWorkersRequest) (*weftv1.ListWorkersResponse, error) {
	return unary(ctx, c, true, req, c.workers.ListWorkers)
}

// DescribeQueue describes one of the caller's queues; retried, since it
// changes nothing.
func (c *Client) DescribeQueue(ctx context.Context, req *weftv1.DescribeQueueRequest) (*weftv1.DescribeQueueResponse, error) {
	return unary(ctx, c, true, req, c.workers.DescribeQueue)
}
