// Package eventschema generates JSON Schema (Draft 2020-12) files for Weft's
// events from the proto descriptors of weft.v1.Event and its payloads and
// their protovalidate rules, for consumers outside Go and TypeScript. The
// proto rules stay the source of truth: nothing here is written by hand.
//
// It imports only the generated code and protobuf/protovalidate descriptors.
package eventschema

import (
	"encoding/json"
	"fmt"
	"sort"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// Draft is the JSON Schema dialect of every file.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// Schema is one JSON Schema object.
type Schema = map[string]any

// Generate answers one schema per event type, keyed by file name
// ("<EventType>.schema.json"): the envelope plus that type's payload, in
// the JSON the API serves (proto field names, enums by name, 64-bit
// integers as strings or numbers, timestamps as RFC 3339 strings).
func Generate() (map[string][]byte, error) {
	ev := (&weftv1.Event{}).ProtoReflect().Descriptor()
	payload := ev.Oneofs().ByName("payload")
	out := map[string][]byte{}
	for i := range payload.Fields().Len() {
		pf := payload.Fields().Get(i)
		typ := string(pf.Message().Name())
		g := &generator{defs: Schema{}}
		props, required := Schema{}, []string{}
		for j := range ev.Fields().Len() {
			f := ev.Fields().Get(j)
			if f.ContainingOneof() != nil && f != pf {
				continue
			}
			s, req := g.field(f)
			if f.Name() == "event_type" {
				s["const"] = typ
				req = true
			}
			if f == pf {
				req = true // the oneof payload is required
			}
			props[string(f.Name())] = s
			if req {
				required = append(required, string(f.Name()))
			}
		}
		sort.Strings(required)
		schema := Schema{
			"$schema":     Draft,
			"$id":         "https://weft.dev/schemas/events/" + typ + ".schema.json",
			"title":       typ,
			"description": "A Weft " + typ + " event: the envelope of docs/semantics.md#events and the " + string(pf.Name()) + " payload. Generated from proto/weft/v1/event.proto and its protovalidate rules; do not edit.",
			"type":        "object",
			"properties":  props,
			"required":    required,
			"$defs":       g.defs,
		}
		b, err := json.MarshalIndent(schema, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", typ, err)
		}
		out[typ+".schema.json"] = append(b, '\n')
	}
	return out, nil
}

type generator struct{ defs Schema }

// field answers a field's schema and whether the JSON always carries it
// (protojson omits zero values, so a rule that forbids the zero value makes
// the field required).
func (g *generator) field(f protoreflect.FieldDescriptor) (Schema, bool) {
	rules, _ := proto.GetExtension(f.Options(), validate.E_Field).(*validate.FieldRules)
	if f.IsMap() {
		return Schema{"type": "object", "additionalProperties": g.single(f.MapValue(), nil)}, false
	}
	if f.IsList() {
		s := Schema{"type": "array", "items": g.single(f, nil)}
		if r := rules.GetRepeated(); r != nil {
			if r.GetMinItems() > 0 {
				s["minItems"] = r.GetMinItems()
			}
			if r.HasMaxItems() {
				s["maxItems"] = r.GetMaxItems()
			}
			return s, r.GetMinItems() > 0
		}
		return s, false
	}
	s := g.single(f, rules)
	req := rules.GetRequired()
	switch {
	case rules.GetString_().GetMinLen() > 0, rules.GetString_().GetUuid():
		req = true
	case rules.GetUint64().GetGte() > 0, rules.GetUint32().GetGte() > 0:
		req = true
	case rules.GetEnum() != nil && containsZero(rules.GetEnum().GetNotIn()):
		req = true
	}
	return s, req
}

func containsZero(xs []int32) bool {
	for _, x := range xs {
		if x == 0 {
			return true
		}
	}
	return false
}

// single answers the schema of one value of f's type.
func (g *generator) single(f protoreflect.FieldDescriptor, rules *validate.FieldRules) Schema {
	switch f.Kind() {
	case protoreflect.StringKind:
		s := Schema{"type": "string"}
		if r := rules.GetString_(); r != nil {
			if r.GetMinLen() > 0 {
				s["minLength"] = r.GetMinLen()
			}
			if r.HasMaxLen() {
				s["maxLength"] = r.GetMaxLen()
			}
			if r.GetPattern() != "" {
				s["pattern"] = r.GetPattern()
			}
			if r.GetUuid() {
				s["format"] = "uuid"
				s["pattern"] = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
			}
		}
		return s
	case protoreflect.BoolKind:
		return Schema{"type": "boolean"}
	case protoreflect.BytesKind:
		return Schema{"type": "string", "contentEncoding": "base64"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return Schema{"type": "number"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return Schema{"type": "integer"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		s := Schema{"type": "integer", "minimum": 0}
		if r := rules.GetUint32(); r != nil && r.GetGte() > 0 {
			s["minimum"] = r.GetGte()
		}
		return s
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return Schema{"type": []string{"string", "integer"}, "pattern": "^-?[0-9]+$"}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// protojson writes 64-bit integers as strings and reads both forms;
		// "minimum" applies to the number form only.
		s := Schema{"type": []string{"string", "integer"}, "pattern": "^[0-9]+$", "minimum": 0}
		if r := rules.GetUint64(); r != nil && r.GetGte() > 0 {
			s["minimum"] = r.GetGte()
			s["pattern"] = "^0*[1-9][0-9]*$"
		}
		return s
	case protoreflect.EnumKind:
		return enumSchema(f.Enum(), rules.GetEnum().GetNotIn())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return g.message(f.Message())
	}
	return Schema{}
}

func enumSchema(e protoreflect.EnumDescriptor, notIn []int32) Schema {
	var names []string
	for i := range e.Values().Len() {
		v := e.Values().Get(i)
		skip := false
		for _, n := range notIn {
			skip = skip || int32(v.Number()) == n
		}
		if !skip {
			names = append(names, string(v.Name()))
		}
	}
	return Schema{"type": "string", "enum": names}
}

// message answers a well-known type's JSON form, or a $ref to the message's definition.
func (g *generator) message(m protoreflect.MessageDescriptor) Schema {
	switch m.FullName() {
	case "google.protobuf.Timestamp":
		return Schema{"type": "string", "format": "date-time"}
	case "google.protobuf.Duration":
		return Schema{"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?s$"}
	case "google.protobuf.Value":
		return Schema{}
	case "google.protobuf.Struct":
		return Schema{"type": "object"}
	case "google.protobuf.ListValue":
		return Schema{"type": "array"}
	}
	name := string(m.FullName())
	ref := Schema{"$ref": "#/$defs/" + name}
	if _, done := g.defs[name]; done {
		return ref
	}
	g.defs[name] = Schema{} // placeholder: recursion ends here
	props, required := Schema{}, []string{}
	for i := range m.Fields().Len() {
		f := m.Fields().Get(i)
		s, req := g.field(f)
		props[string(f.Name())] = s
		if req {
			required = append(required, string(f.Name()))
		}
	}
	def := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		def["required"] = required
	}
	g.defs[name] = def
	return ref
}
