package client

import (
	"context"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// SignalRun sends a named signal. When req.SignalId is nil, SignalRun makes
// one UUID and sends it on every retry of this call, so that a retry after a
// lost answer is deduplicated by the server and answers the original
// accepted result (resp.Duplicate). A SignalAcceptanceIndeterminate fault is
// never retried.
func (c *Client) SignalRun(ctx context.Context, req *weftv1.SignalRunRequest) (*weftv1.SignalRunResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.SignalRunRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.signals.SignalRun)
}

// CompleteManualAction completes a step that waits for a person. It is
// idempotent on (run, action, completion token) and so retried. A zero
// schema_version is sent as 1.
func (c *Client) CompleteManualAction(ctx context.Context, req *weftv1.CompleteManualActionRequest) (*weftv1.CompleteManualActionResponse, error) {
	if req.GetSchemaVersion() == 0 {
		req = cloneOf(req)
		req.SchemaVersion = 1
	}
	return unary(ctx, c, true, req, c.signals.CompleteManualAction)
}
