package client

import (
	"context"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// PutDefinition stores a definition in the registry under its plan_id and
// plan_version. Storing the same definition again answers the stored one
// (Existing), so the call is retried; a different definition under a stored
// version is refused (CodeOperationConflict naming the plan and version).
func (c *Client) PutDefinition(ctx context.Context, def *weftv1.WorkflowDefinition) (*weftv1.PutDefinitionResponse, error) {
	return unary(ctx, c, true, &weftv1.PutDefinitionRequest{Definition: def}, c.defs.PutDefinition)
}

// GetDefinition answers a stored version of a plan; an empty version
// answers the plan's latest (the version stored last).
func (c *Client) GetDefinition(ctx context.Context, planID, version string) (*weftv1.GetDefinitionResponse, error) {
	req := &weftv1.GetDefinitionRequest{Ref: &weftv1.DefinitionRef{PlanId: planID, PlanVersion: version}}
	return unary(ctx, c, true, req, c.defs.GetDefinition)
}

// ListDefinitions answers one page of stored versions, by plan id and then
// version, without their bodies.
func (c *Client) ListDefinitions(ctx context.Context, req *weftv1.ListDefinitionsRequest) (*weftv1.ListDefinitionsResponse, error) {
	return unary(ctx, c, true, req, c.defs.ListDefinitions)
}

// ParseDefinition reads a workflow in the YAML shape (docs/definitions.md)
// and validates it as a submission would, storing nothing: the definition to
// submit, or CodeInvalidArgument with each problem named by its YAML path.
func (c *Client) ParseDefinition(ctx context.Context, yaml string) (*weftv1.WorkflowDefinition, error) {
	res, err := unary(ctx, c, true, &weftv1.ParseDefinitionRequest{Yaml: yaml}, c.defs.ParseDefinition)
	if err != nil {
		return nil, err
	}
	return res.GetDefinition(), nil
}
