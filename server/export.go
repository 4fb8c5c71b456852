package server

import (
	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// DefinitionToProto converts an engine definition (for example one read by
// definition.LoadYAML) to the API's
// WorkflowDefinition, the conversion the server uses when it answers runs.
// It answers nil for an empty definition.
func DefinitionToProto(d definition.Definition) *weftv1.WorkflowDefinition { return definitionProto(d) }
