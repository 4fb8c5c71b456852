package apitest

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testViews: on every protocol, a view saved under a new name is listed
// with its query, filters, who saved it and when, saving the name again
// replaces it (created is false, one view of the name), a deleted view is
// gone and deleting it again is not_found, and a nameless view or an
// unspecified status is invalid_argument naming the field. JSON-RPC reaches
// the same views.
func testViews(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			ctx := context.Background()
			name := uniqueName("failed payments")
			after := timestamppb.New(time.Now().Add(-24 * time.Hour).Truncate(time.Millisecond))
			v := &weftv1.View{Name: name, Query: "status = FAILED", Filters: &weftv1.ViewFilters{
				Statuses: []weftv1.RunStatus{weftv1.RunStatus_RUN_STATUS_FAILED, weftv1.RunStatus_RUN_STATUS_BLOCKED},
				PlanId:   "payments", CreatedAfter: after, RunIdContains: "run-"}}
			saved, err := c.Views.SaveView(ctx, connect.NewRequest(&weftv1.SaveViewRequest{View: v}))
			require.NoError(t, err)
			require.True(t, saved.Msg.GetCreated())
			require.NotEmpty(t, saved.Msg.GetView().GetSavedBy())
			require.NotNil(t, saved.Msg.GetView().GetSavedAt())

			v.Query = "status = FAILED and plan_id = payments"
			again, err := c.Views.SaveView(ctx, connect.NewRequest(&weftv1.SaveViewRequest{View: v}))
			require.NoError(t, err)
			require.False(t, again.Msg.GetCreated(), "the name again replaces the view")

			got := findView(t, c, name)
			require.NotNil(t, got, "the saved view is listed")
			require.Equal(t, v.Query, got.GetQuery(), "the last save wins")
			require.Equal(t, v.GetFilters().GetStatuses(), got.GetFilters().GetStatuses())
			require.Equal(t, "payments", got.GetFilters().GetPlanId())
			require.True(t, after.AsTime().Equal(got.GetFilters().GetCreatedAfter().AsTime()))
			require.Nil(t, got.GetFilters().GetCreatedBefore())
			require.Equal(t, "run-", got.GetFilters().GetRunIdContains())

			_, err = c.Views.DeleteView(ctx, connect.NewRequest(&weftv1.DeleteViewRequest{Name: name}))
			require.NoError(t, err)
			require.Nil(t, findView(t, c, name), "a deleted view is gone")
			_, err = c.Views.DeleteView(ctx, connect.NewRequest(&weftv1.DeleteViewRequest{Name: name}))
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_NOT_FOUND)

			_, err = c.Views.SaveView(ctx, connect.NewRequest(&weftv1.SaveViewRequest{View: &weftv1.View{Query: "x"}}))
			RequireInvalidField(t, err, "view.name", "string.min_len")
			_, err = c.Views.SaveView(ctx, connect.NewRequest(&weftv1.SaveViewRequest{View: &weftv1.View{Name: name,
				Filters: &weftv1.ViewFilters{Statuses: []weftv1.RunStatus{weftv1.RunStatus_RUN_STATUS_UNSPECIFIED}}}}))
			RequireInvalidField(t, err, "view.filters.statuses[0]", "enum.not_in")
		})
	}
	t.Run("jsonrpc", func(t *testing.T) {
		name := uniqueName("jsonrpc view")
		res := CallJSONRPC(t, baseURL, 1, "weft.v1.ViewService/SaveView", map[string]any{"view": map[string]any{"name": name, "query": "status = RUNNING"}}, nil)
		require.Nil(t, res.Error)
		res = CallJSONRPC(t, baseURL, 2, "weft.v1.ViewService/ListViews", map[string]any{"page_size": 1000}, nil)
		require.Nil(t, res.Error)
		require.Contains(t, string(res.Result), name)
	})
}

// findView answers the tenant's view of name, paging through ListViews, or nil.
func findView(t *testing.T, c Clients, name string) *weftv1.View {
	t.Helper()
	token := ""
	for {
		res, err := c.Views.ListViews(context.Background(), connect.NewRequest(&weftv1.ListViewsRequest{PageSize: 2, PageToken: token}))
		require.NoError(t, err)
		for _, v := range res.Msg.GetViews() {
			if v.GetName() == name {
				return v
			}
		}
		if res.Msg.GetNextPageToken() == "" {
			return nil
		}
		token = res.Msg.GetNextPageToken()
	}
}
