package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

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
// A file that cannot be read or is invalid is an input error (exit code 1),
// not a usage error: the command line was right.
func loadDefinition(path string) (*weftv1.WorkflowDefinition, *definition.PathMap, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read the workflow file: %w", err)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		def := &weftv1.WorkflowDefinition{}
		if protojson.Unmarshal(trimmed, def) == nil && len(def.GetActions()) > 0 {
			return def, nil, nil
		}
	}
	d, paths, err := definition.ReadYAML(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	def := eventpb.DefinitionProto(d)
	if def == nil {
		return nil, nil, fmt.Errorf("%s: the workflow has no steps", path)
	}
	return def, paths, nil
}

// inYAML rewrites the server's refusal of a definition read from a YAML
// file so that it names each invalid field by its YAML path, once (the
// server's message, which lists the API's paths, is replaced).
func inYAML(err error, paths *definition.PathMap) error {
	return placeViolations(err, paths, nil)
}

// scheduleFlags names the command-line flag each field of a schedule's
// spec comes from, so that a refused --cron is not blamed on the file.
var scheduleFlags = map[string]string{
	"spec.cron": "--cron", "spec.interval_ms": "--every", "spec.trigger": "--cron/--every",
	"spec.time_zone": "--tz", "spec.overlap_policy": "--overlap", "spec.catchup_window_ms": "--catchup",
	"input": "--input", "schedule_id": "ID",
}

// placeViolations names each violation of a refusal by where the user wrote
// the field: a flag's name (flags maps API paths to flags), or its YAML
// path in the workflow file (paths, when the file was YAML). The message
// says which was refused: the flags, the workflow file, or both.
func placeViolations(err error, paths *definition.PathMap, flags map[string]string) error {
	var e *client.Error
	if (paths == nil && flags == nil) || !errors.As(err, &e) || len(e.Violations) == 0 {
		return err
	}
	out := *e
	out.Violations = nil
	var inFlags, inFile bool
	seen := make(map[string]bool, len(e.Violations))
	for _, v := range e.Violations {
		if flag, ok := flagOf(v.Field, flags); ok {
			v.Field, inFlags = flag, true
		} else if paths != nil && strings.HasPrefix(v.Field, "definition") {
			v.Field, inFile = paths.YAMLPath(v.Field), true
		}
		if key := v.Field + "\x00" + v.Rule; !seen[key] {
			seen[key] = true
			out.Violations = append(out.Violations, v)
		}
	}
	switch {
	case inFlags && inFile:
		out.Message = "the server refused the flags and the workflow file"
	case inFlags:
		out.Message = "the server refused the flags"
	case inFile:
		out.Message = "the server refused the workflow file"
	}
	return &out
}

// flagOf answers the flag an API path (or a path inside it) comes from.
func flagOf(field string, flags map[string]string) (string, bool) {
	for path, flag := range flags {
		if field == path || strings.HasPrefix(field, path+".") {
			return flag, true
		}
	}
	return "", false
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
