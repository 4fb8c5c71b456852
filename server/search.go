package server

import (
	"context"
	"slices"
	"strings"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// searchAttributesOf converts a request's search attributes (at field) to
// the engine's, sorted by name; a value with none of its fields set is
// refused naming it. The engine checks names, types and values.
func searchAttributesOf(m map[string]*weftv1.SearchAttributeValue, field string) ([]runstate.SearchAttribute, error) {
	if len(m) == 0 {
		return nil, nil
	}
	if len(m) > engine.MaxRunAttributes {
		return nil, invalidField(field, "search_attributes.count", "a run carries at most 100 search attributes")
	}
	out := make([]runstate.SearchAttribute, 0, len(m))
	for name, v := range m {
		typ, raw, ok := eventpb.SearchAttributeJSON(v)
		if !ok {
			return nil, invalidField(field+"."+name, "search_attributes.value", "search attribute "+name+" has no value: set one of its fields")
		}
		out = append(out, runstate.SearchAttribute{Name: name, Type: typ, Value: raw})
	}
	slices.SortFunc(out, func(a, b runstate.SearchAttribute) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// invalidField answers invalid_argument naming one field and its rule.
func invalidField(field, rule, message string) error {
	return engineFault(&engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid request",
		Violations: []engine.FieldViolation{{Field: field, Rule: rule, Message: message}}})
}

// CountRuns counts the caller's runs matching a query, grouped when asked.
func (s *RunService) CountRuns(ctx context.Context, req *connect.Request[weftv1.CountRunsRequest]) (*connect.Response[weftv1.CountRunsResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	res, err := s.eng.Queries().CountRuns(ctx, engine.CountRunsParams{TenantID: who.tenant, Query: m.GetQuery(),
		GroupBy: m.GetGroupBy(), ProjectID: m.GetProjectId(), EnvironmentID: m.GetEnvironmentId()})
	if err != nil {
		return nil, err
	}
	out := &weftv1.CountRunsResponse{Count: uint64(res.Count)}
	for _, g := range res.Groups {
		group := &weftv1.CountRunsGroup{Count: uint64(g.Count)}
		if g.HasValue {
			group.Value = queryValueProto(g.Value)
		}
		out.Groups = append(out.Groups, group)
	}
	return connect.NewResponse(out), nil
}

// queryValueProto answers a query value as the API's.
func queryValueProto(v runquery.Value) *weftv1.SearchAttributeValue {
	switch v.Type {
	case runquery.Keyword:
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_KeywordValue{KeywordValue: v.S}}
	case runquery.Int:
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_IntValue{IntValue: v.I}}
	case runquery.Double:
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_DoubleValue{DoubleValue: v.F}}
	case runquery.Bool:
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_BoolValue{BoolValue: v.B}}
	case runquery.Time:
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_TimeValue{TimeValue: eventpb.Timestamp(v.T)}}
	}
	return nil
}

// searchTypes maps the query language's types to the API's.
var searchTypes = map[runquery.Type]weftv1.SearchAttributeType{
	runquery.Keyword: weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_KEYWORD,
	runquery.Int:     weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_INT,
	runquery.Double:  weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_DOUBLE,
	runquery.Bool:    weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_BOOL,
	runquery.Time:    weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_TIME,
}

// ListSearchAttributes answers the tenant's search attributes and their types.
func (s *RunService) ListSearchAttributes(ctx context.Context, _ *connect.Request[weftv1.ListSearchAttributesRequest]) (*connect.Response[weftv1.ListSearchAttributesResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	attrs, err := s.eng.Queries().SearchAttributes(ctx, who.tenant)
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListSearchAttributesResponse{}
	for _, a := range attrs {
		out.Attributes = append(out.Attributes, &weftv1.SearchAttributeDeclaration{Name: a.Name, Type: searchTypes[a.Type]})
	}
	return connect.NewResponse(out), nil
}
