package main

import (
	"bytes"
	"os"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/server"
)

// loadDefinition reads a workflow file: the API's WorkflowDefinition in
// proto JSON (recognised when it parses as one with actions), else spec
// 002's YAML shape (JSON is read as YAML too). A file that is neither is a
// usage error naming the YAML path of each problem. The server applies
// defaults and validates the definition.
func loadDefinition(path string) (*weftv1.WorkflowDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("read the workflow file: %v", err)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		def := &weftv1.WorkflowDefinition{}
		if protojson.Unmarshal(trimmed, def) == nil && len(def.GetActions()) > 0 {
			return def, nil
		}
	}
	d, err := definition.LoadYAML(data)
	if err != nil {
		return nil, usageError("%s: %v", path, err)
	}
	def := server.DefinitionToProto(d)
	if def == nil {
		return nil, usageError("%s: the workflow has no steps", path)
	}
	return def, nil
}

// jsonFlag parses a flag's JSON value; empty means none.
func jsonFlag(name, s string) (*structpb.Value, error) {
	if s == "" {
		return nil, nil
	}
	v := &structpb.Value{}
	if err := protojson.Unmarshal([]byte(s), v); err != nil {
		return nil, usageError("%s must be JSON", name)
	}
	return v, nil
}
