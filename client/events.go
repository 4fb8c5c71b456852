package client

import (
	"context"
	"iter"
	"time"

	"connectrpc.com/connect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/clock"
)

// ListEvents answers one page of a run's events in run_seq order after
// req.AfterSeq.
func (c *Client) ListEvents(ctx context.Context, req *weftv1.ListEventsRequest) (*weftv1.ListEventsResponse, error) {
	return unary(ctx, c, true, req, c.events.ListEvents)
}

// ResyncRun answers what a projector needs to rebuild a run (docs/semantics.md#resync).
func (c *Client) ResyncRun(ctx context.Context, req *weftv1.ResyncRunRequest) (*weftv1.ResyncRunResponse, error) {
	return unary(ctx, c, true, req, c.events.ResyncRun)
}

// WatchEvents yields a run's events after afterSeq in run_seq order, then each
// new one as it is appended. The sequence ends when the server ends the stream
// (the run is terminal and every event was sent, or the server shut down), or
// after yielding an error, or when the caller stops ranging. A stream that
// breaks on a retryable error is reopened after the last event yielded, with
// the client's retry policy, so no event is yielded twice. Events of types
// this client does not know are yielded like any other: check
// Event.GetEventType and ignore what you do not handle.
func (c *Client) WatchEvents(ctx context.Context, runID string, afterSeq uint64) iter.Seq2[*weftv1.Event, error] {
	return func(yield func(*weftv1.Event, error) bool) {
		failures := 0
		for {
			stream, err := c.events.WatchEvents(ctx, connect.NewRequest(&weftv1.WatchEventsRequest{RunId: runID, AfterSeq: afterSeq}))
			if err == nil {
				for stream.Receive() {
					ev := stream.Msg().GetEvent()
					if ev == nil {
						continue
					}
					failures = 0
					afterSeq = max(afterSeq, ev.GetRunSeq())
					if !yield(ev, nil) {
						_ = stream.Close()
						return
					}
				}
				err = stream.Err()
				_ = stream.Close()
				if err == nil {
					return
				}
			}
			failures++
			if !Retryable(err) || failures >= c.retry.MaxAttempts || clock.Sleep(ctx, c.retry.backoff(failures)) != nil {
				yield(nil, wrapError(err))
				return
			}
		}
	}
}

// awaitRunWait is how long one RunService.AwaitRun call waits on the server.
const awaitRunWait = 20 * time.Second

// AwaitRun waits until the run is terminal and answers its final snapshot. It
// long-polls RunService.AwaitRun, calling again while the run is not
// terminal, with the client's retry policy for retryable failures; against a
// server without that RPC it watches the run's events instead.
func (c *Client) AwaitRun(ctx context.Context, runID string) (*weftv1.Run, error) {
	req := &weftv1.AwaitRunRequest{RunId: runID, WaitMs: uint32(awaitRunWait.Milliseconds())}
	for {
		res, err := unary(ctx, c, true, req, c.runs.AwaitRun)
		switch {
		case IsCode(err, CodeUnimplemented):
			return c.awaitRunByWatch(ctx, runID)
		case err != nil:
			return nil, err
		case Terminal(res.GetRun().GetStatus()):
			return res.GetRun(), nil
		}
	}
}

// SubmitAndAwait submits a run, starts it, waits until it is terminal and
// answers its final snapshot. It asks SubmitRun itself to wait (await_ms), so
// a run that ends within that wait costs one call; a run that does not, or a
// server that predates await_ms, is then awaited as AwaitRun does. req is not
// modified (its Start and AwaitMs are set on a copy); like SubmitRun, the
// call is retried only when req.RunRequestId is set.
func (c *Client) SubmitAndAwait(ctx context.Context, req *weftv1.SubmitRunRequest) (*weftv1.Run, error) {
	res, err := c.SubmitRun(ctx, awaitingCopy(req))
	if err != nil {
		return nil, err
	}
	if run := res.GetRun(); Terminal(run.GetStatus()) {
		return run, nil
	}
	return c.AwaitRun(ctx, res.GetRun().GetRunId())
}

// awaitingCopy answers req with start set and, unless req sets one,
// awaitRunWait as its await_ms. The copy shares req's messages (the
// definition and input) rather than cloning them.
func awaitingCopy(req *weftv1.SubmitRunRequest) *weftv1.SubmitRunRequest {
	wait := req.GetAwaitMs()
	if wait == 0 {
		wait = uint32(awaitRunWait.Milliseconds())
	}
	return &weftv1.SubmitRunRequest{Definition: req.GetDefinition(), DefinitionRef: req.GetDefinitionRef(),
		RunRequestId: req.GetRunRequestId(), Start: true,
		ProjectId: req.GetProjectId(), EnvironmentId: req.GetEnvironmentId(), Input: req.GetInput(), AwaitMs: wait,
		SearchAttributes: req.GetSearchAttributes(), Priority: req.Priority}
}

// awaitRunByWatch watches a run until it is terminal and answers its final
// snapshot: AwaitRun against a server that predates RunService.AwaitRun.
func (c *Client) awaitRunByWatch(ctx context.Context, runID string) (*weftv1.Run, error) {
	var after uint64
	for {
		for ev, err := range c.WatchEvents(ctx, runID, after) {
			if err != nil {
				return nil, err
			}
			after = ev.GetRunSeq()
		}
		run, err := c.GetRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		if Terminal(run.GetStatus()) {
			return run, nil
		}
		after = max(after, run.GetLastEventSeq())
		if clock.Sleep(ctx, c.retry.InitialBackoff) != nil {
			return nil, wrapError(ctx.Err())
		}
	}
}
