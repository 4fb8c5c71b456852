package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// DefinitionService serves weft.v1.DefinitionService over the engine's
// definition registry: it converts each request, calls the registry once,
// and converts the answer or the fault.
type DefinitionService struct {
	defs *engine.Definitions
}

var _ weftv1connect.DefinitionServiceHandler = (*DefinitionService)(nil)

// NewDefinitionService answers the DefinitionService handler over eng's registry.
func NewDefinitionService(eng *engine.Engine) *DefinitionService {
	return &DefinitionService{defs: eng.Definitions()}
}

// PutDefinition stores a definition version.
func (s *DefinitionService) PutDefinition(ctx context.Context, req *connect.Request[weftv1.PutDefinitionRequest]) (*connect.Response[weftv1.PutDefinitionResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	def, err := definitionOf(req.Msg.GetDefinition(), "definition")
	if err != nil {
		return nil, err
	}
	res, err := s.defs.Put(ctx, engine.PutDefinitionParams{TenantID: who.tenant, Definition: def, CreatedBy: who.principal})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.PutDefinitionResponse{Version: definitionVersionProto(res.Stored),
		Definition: definitionProto(res.Stored.Definition), Existing: res.Existing}), nil
}

// GetDefinition answers a stored version, or a plan's latest.
func (s *DefinitionService) GetDefinition(ctx context.Context, req *connect.Request[weftv1.GetDefinitionRequest]) (*connect.Response[weftv1.GetDefinitionResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := s.defs.Get(ctx, engine.GetDefinitionParams{TenantID: who.tenant, Ref: definitionRefOf(req.Msg.GetRef())})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.GetDefinitionResponse{Version: definitionVersionProto(stored),
		Definition: definitionProto(stored.Definition)}), nil
}

// ListDefinitions pages through the caller's stored versions.
func (s *DefinitionService) ListDefinitions(ctx context.Context, req *connect.Request[weftv1.ListDefinitionsRequest]) (*connect.Response[weftv1.ListDefinitionsResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	page, err := s.defs.List(ctx, engine.ListDefinitionsParams{TenantID: who.tenant, PlanID: req.Msg.GetPlanId(),
		PageSize: int(req.Msg.GetPageSize()), PageToken: req.Msg.GetPageToken()})
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListDefinitionsResponse{NextPageToken: page.NextPageToken}
	for _, d := range page.Definitions {
		out.Versions = append(out.Versions, definitionVersionProto(d))
	}
	return connect.NewResponse(out), nil
}

// definitionRefOf converts a reference to a stored definition.
func definitionRefOf(r *weftv1.DefinitionRef) engine.DefinitionRef {
	return engine.DefinitionRef{PlanID: r.GetPlanId(), Version: r.GetPlanVersion()}
}

// definitionVersionProto describes a stored version.
func definitionVersionProto(d *engine.StoredDefinition) *weftv1.DefinitionVersion {
	return &weftv1.DefinitionVersion{PlanId: d.Definition.PlanID, PlanVersion: d.Definition.PlanVersion,
		DisplayName: d.Definition.DisplayName, PlanSha256: d.PlanSHA256, CreatedBy: d.CreatedBy,
		CreatedAt: timestamppb.New(d.CreatedAt), ActionCount: uint32(len(d.Definition.Actions)), Latest: d.Latest}
}

// ParseDefinition reads a YAML workflow document and validates it, storing
// nothing: the definition to submit, or every problem named by its YAML path.
func (s *DefinitionService) ParseDefinition(ctx context.Context, req *connect.Request[weftv1.ParseDefinitionRequest]) (*connect.Response[weftv1.ParseDefinitionResponse], error) {
	if _, err := callerOf(ctx); err != nil {
		return nil, err
	}
	def, paths, err := definition.ReadYAML([]byte(req.Msg.GetYaml()))
	if err != nil {
		return nil, yamlFault(err)
	}
	if err := inYAMLPaths(engine.CheckDefinition(def), paths); err != nil {
		return nil, err // what the YAML's own validation cannot check: flow control's keys and rates
	}
	out := eventpb.DefinitionProto(def)
	if out == nil {
		return nil, &engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid YAML definition",
			Violations: []engine.FieldViolation{{Field: "steps", Rule: "definition.steps", Message: "the workflow has no steps"}}}
	}
	return connect.NewResponse(&weftv1.ParseDefinitionResponse{Definition: out}), nil
}

// inYAMLPaths names each violation of an engine refusal by its YAML path.
func inYAMLPaths(err error, paths *definition.PathMap) error {
	var e *engine.Error
	if !errors.As(err, &e) {
		return err
	}
	out := *e
	out.Violations = make([]engine.FieldViolation, len(e.Violations))
	for i, v := range e.Violations {
		v.Field = paths.YAMLPath(v.Field)
		out.Violations[i] = v
	}
	return &out
}

// yamlFault answers a YAML document's refusal as an invalid-argument error
// whose violations name YAML paths; a problem of the whole document (its
// syntax) names the request's yaml field.
func yamlFault(err error) error {
	var invalid *definition.Error
	if !errors.As(err, &invalid) {
		return err
	}
	violations := make([]engine.FieldViolation, len(invalid.Violations))
	for i, v := range invalid.Violations {
		if v.Field == "" {
			v.Field = "yaml"
		}
		violations[i] = v
	}
	return &engine.Error{Code: engine.CodeInvalidArgument, Message: invalid.Message, Violations: violations}
}
