package client

import (
	"context"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// SaveView stores a saved view of the runs list under its name, replacing
// the tenant's view of that name (docs/semantics.md#saved-views); saving
// the same view again leaves one view, so the call is retried.
func (c *Client) SaveView(ctx context.Context, v *weftv1.View) (*weftv1.SaveViewResponse, error) {
	return unary(ctx, c, true, &weftv1.SaveViewRequest{View: v}, c.views.SaveView)
}

// ListViews answers one page of the tenant's saved views, by name.
func (c *Client) ListViews(ctx context.Context, req *weftv1.ListViewsRequest) (*weftv1.ListViewsResponse, error) {
	return unary(ctx, c, true, req, c.views.ListViews)
}

// DeleteView removes the tenant's view of name; a name no view has is
// CodeNotFound (also when a retry finds it already deleted).
func (c *Client) DeleteView(ctx context.Context, name string) error {
	_, err := unary(ctx, c, true, &weftv1.DeleteViewRequest{Name: name}, c.views.DeleteView)
	return err
}
