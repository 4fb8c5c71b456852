package server

import (
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// DefinitionToProto converts an engine definition (for example one read by
// definition.LoadYAML) to the API's
// WorkflowDefinition, the conversion the server uses when it answers runs.
// It answers nil for an empty definition. It is eventpb.DefinitionProto,
// kept for callers that have the server already.
func DefinitionToProto(d definition.Definition) *weftv1.WorkflowDefinition {
	return eventpb.DefinitionProto(d)
}
