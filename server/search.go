package server

import (
	"context"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// searchUnavailable is the fault of a search call this server does not
// serve yet (failed_precondition, never a 5xx): the query language and
// search attributes are being wired.
func searchUnavailable() error {
	return engineFault(&engine.Error{Code: engine.CodeFailedPrecondition,
		Message: "run queries and search attributes are not served by this server yet"})
}

// CountRuns counts the caller's runs matching a query.
func (s *RunService) CountRuns(context.Context, *connect.Request[weftv1.CountRunsRequest]) (*connect.Response[weftv1.CountRunsResponse], error) {
	return nil, searchUnavailable()
}

// ListSearchAttributes answers the tenant's search attributes.
func (s *RunService) ListSearchAttributes(context.Context, *connect.Request[weftv1.ListSearchAttributesRequest]) (*connect.Response[weftv1.ListSearchAttributesResponse], error) {
	return nil, searchUnavailable()
}
