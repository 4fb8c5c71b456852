package server

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/view"
)

// ViewService serves weft.v1.ViewService over the saved views in the store
// (package view): per tenant, by name.
type ViewService struct {
	views *view.Views
}

var _ weftv1connect.ViewServiceHandler = (*ViewService)(nil)

// NewViewService answers the ViewService handler over views.
func NewViewService(views *view.Views) *ViewService { return &ViewService{views: views} }

// SaveView stores a view under its name, replacing the tenant's view of that name.
func (s *ViewService) SaveView(ctx context.Context, req *connect.Request[weftv1.SaveViewRequest]) (*connect.Response[weftv1.SaveViewResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	v, created, err := s.views.Save(ctx, who.tenant, viewOf(req.Msg.GetView()), who.principal)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.SaveViewResponse{View: viewProto(v), Created: created}), nil
}

// ListViews answers a page of the tenant's views by name.
func (s *ViewService) ListViews(ctx context.Context, req *connect.Request[weftv1.ListViewsRequest]) (*connect.Response[weftv1.ListViewsResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	views, next, err := s.views.List(ctx, who.tenant, int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListViewsResponse{NextPageToken: next, Views: make([]*weftv1.View, 0, len(views))}
	for i := range views {
		out.Views = append(out.Views, viewProto(&views[i]))
	}
	return connect.NewResponse(out), nil
}

// DeleteView removes a view.
func (s *ViewService) DeleteView(ctx context.Context, req *connect.Request[weftv1.DeleteViewRequest]) (*connect.Response[weftv1.DeleteViewResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.views.Delete(ctx, who.tenant, req.Msg.GetName()); err != nil {
		if errors.Is(err, view.ErrNotFound) {
			return nil, &engine.Error{Code: engine.CodeNotFound, Message: "no view is named " + req.Msg.GetName()}
		}
		return nil, err
	}
	return connect.NewResponse(&weftv1.DeleteViewResponse{}), nil
}

// viewOf converts a request's view; statuses are kept by their proto names.
func viewOf(v *weftv1.View) view.View {
	f := v.GetFilters()
	out := view.View{Name: v.GetName(), Query: v.GetQuery(), Filters: view.Filters{PlanID: f.GetPlanId(),
		CreatedAfter: timeOf(f.GetCreatedAfter()), CreatedBefore: timeOf(f.GetCreatedBefore()), RunIDContains: f.GetRunIdContains()}}
	for _, st := range f.GetStatuses() {
		out.Filters.Statuses = append(out.Filters.Statuses, st.String())
	}
	return out
}

// viewProto converts a stored view; a status this weftd does not know is left out.
func viewProto(v *view.View) *weftv1.View {
	f := &weftv1.ViewFilters{PlanId: v.Filters.PlanID, RunIdContains: v.Filters.RunIDContains,
		CreatedAfter: timestampOf(v.Filters.CreatedAfter), CreatedBefore: timestampOf(v.Filters.CreatedBefore)}
	for _, name := range v.Filters.Statuses {
		if n, ok := weftv1.RunStatus_value[name]; ok {
			f.Statuses = append(f.Statuses, weftv1.RunStatus(n))
		}
	}
	return &weftv1.View{Name: v.Name, Query: v.Query, Filters: f, SavedBy: v.SavedBy, SavedAt: timestamppb.New(v.SavedAt)}
}

// timestampOf converts an optional time; the zero time is unset.
func timestampOf(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}
