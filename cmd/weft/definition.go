package main

import (
	"bytes"
	"errors"
	"os"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// loadDefinition reads a workflow file: the API's WorkflowDefinition in
// proto JSON (recognised when it parses as one with actions), else spec
// 002's YAML shape (JSON is read as YAML too). A YAML file is also validated
// here, and every problem is one usage error naming each YAML path once;
// the PathMap it answers then places the server's findings in the file
// (inYAML). The server applies defaults and validates the definition again.
func loadDefinition(path string) (*weftv1.WorkflowDefinition, *definition.PathMap, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, usageError("read the workflow file: %v", err)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		def := &weftv1.WorkflowDefinition{}
		if protojson.Unmarshal(trimmed, def) == nil && len(def.GetActions()) > 0 {
			return def, nil, nil
		}
	}
	d, paths, err := definition.ReadYAML(data)
	if err != nil {
		return nil, nil, usageError("%s: %v", path, err)
	}
	def := eventpb.DefinitionProto(d)
	if def == nil {
		return nil, nil, usageError("%s: the workflow has no steps", path)
	}
	return def, paths, nil
}

// inYAML rewrites the server's refusal of a definition read from a YAML
// file so that it names each invalid field by its YAML path, once (the
// server's message, which lists the API's paths, is replaced).
func inYAML(err error, paths *definition.PathMap) error {
	var e *client.Error
	if paths == nil || !errors.As(err, &e) || len(e.Violations) == 0 {
		return err
	}
	out := *e
	out.Message = "the server refused the workflow file"
	out.Violations = nil
	seen := make(map[string]bool, len(e.Violations))
	for _, v := range e.Violations {
		v.Field = paths.YAMLPath(v.Field)
		if key := v.Field + "\x00" + v.Rule; !seen[key] {
			seen[key] = true
			out.Violations = append(out.Violations, v)
		}
	}
	return &out
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
