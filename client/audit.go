package client

import (
	"context"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// ListAuditEvents answers one page of the caller's tenant's audit log,
// newest first (the admin role's audit.read permission).
func (c *Client) ListAuditEvents(ctx context.Context, req *weftv1.ListAuditEventsRequest) (*weftv1.ListAuditEventsResponse, error) {
	return unary(ctx, c, true, req, c.audit.ListAuditEvents)
}
