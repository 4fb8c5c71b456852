package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// RuleUnknownEnumName is the rule_id of the violation a request answers when
// it names an enum value the server does not know.
const RuleUnknownEnumName = "enum.known_name"

// maxEnumViolations bounds the violations one refusal lists, so that the
// error (a gRPC trailer, among others) stays small whatever the request.
const maxEnumViolations = 16

// unknownEnumNames answers a violation for each enum value data names (in
// proto JSON, as a string) that md's enum does not define, walking the
// fields md knows: unknown fields are skipped, numbers are left to protobuf
// and to the defined_only rules. Messages of google.protobuf (Struct, Value,
// Any, Timestamp, …) have JSON forms of their own and are not walked.
func unknownEnumNames(data []byte, md protoreflect.MessageDescriptor) []*validate.Violation {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	if dec.Decode(&root) != nil {
		return nil
	}
	w := enumWalk{}
	w.message(md, root, nil)
	return w.out
}

// enumWalk collects the violations of one request.
type enumWalk struct {
	out []*validate.Violation
}

func (w *enumWalk) full() bool { return len(w.out) >= maxEnumViolations }

// message walks a JSON object decoded as md.
func (w *enumWalk) message(md protoreflect.MessageDescriptor, v any, path []*validate.FieldPathElement) {
	obj, ok := v.(map[string]any)
	if !ok || md.FullName().Parent() == "google.protobuf" {
		return
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		// protojson accepts the JSON name and the proto name; a request
		// naming one field both ways has already failed to decode.
		val, ok := obj[fd.JSONName()]
		if !ok {
			val, ok = obj[fd.TextName()]
		}
		if !ok || val == nil {
			continue
		}
		w.field(fd, val, path)
		if w.full() {
			return
		}
	}
}

// field walks the value of one field: a list, a map or a single value.
func (w *enumWalk) field(fd protoreflect.FieldDescriptor, v any, path []*validate.FieldPathElement) {
	switch {
	case fd.IsList():
		items, _ := v.([]any)
		for i, item := range items {
			w.value(fd, item, append(path, indexElement(fd, i)))
			if w.full() {
				return
			}
		}
	case fd.IsMap():
		entries, _ := v.(map[string]any)
		keys := make([]string, 0, len(entries))
		for k := range entries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.value(fd.MapValue(), entries[k], append(path, keyElement(fd, k)))
			if w.full() {
				return
			}
		}
	default:
		w.value(fd, v, append(path, pathElement(fd)))
	}
}

// value checks one enum name, or walks one message.
func (w *enumWalk) value(fd protoreflect.FieldDescriptor, v any, path []*validate.FieldPathElement) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		name, ok := v.(string)
		if !ok || fd.Enum().Values().ByName(protoreflect.Name(name)) != nil {
			return
		}
		w.out = append(w.out, &validate.Violation{
			Field:   &validate.FieldPath{Elements: clonePath(path)},
			RuleId:  proto.String(RuleUnknownEnumName),
			Message: proto.String(fmt.Sprintf("is not a value of enum %s", fd.Enum().FullName())),
		})
	case protoreflect.MessageKind, protoreflect.GroupKind:
		w.message(fd.Message(), v, path)
	}
}

// pathElement names fd in a field path as protovalidate names it; the
// caller sets a list index or map key subscript.
func pathElement(fd protoreflect.FieldDescriptor) *validate.FieldPathElement {
	el := &validate.FieldPathElement{}
	el.SetFieldNumber(int32(fd.Number()))
	el.SetFieldName(string(fd.Name()))
	el.SetFieldType(descriptorpb.FieldDescriptorProto_Type(fd.Kind()))
	if fd.IsMap() {
		el.SetKeyType(descriptorpb.FieldDescriptorProto_Type(fd.MapKey().Kind()))
		el.SetValueType(descriptorpb.FieldDescriptorProto_Type(fd.MapValue().Kind()))
	}
	return el
}

// indexElement names item i of the list fd.
func indexElement(fd protoreflect.FieldDescriptor, i int) *validate.FieldPathElement {
	el := pathElement(fd)
	el.SetIndex(uint64(i))
	return el
}

// keyElement names the entry of the map fd under key k, as JSON spells it.
func keyElement(fd protoreflect.FieldDescriptor, k string) *validate.FieldPathElement {
	el := pathElement(fd)
	switch fd.MapKey().Kind() {
	case protoreflect.BoolKind:
		b, _ := strconv.ParseBool(k)
		el.SetBoolKey(b)
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind,
		protoreflect.Sint64Kind, protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		i, _ := strconv.ParseInt(k, 10, 64)
		el.SetIntKey(i)
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		u, _ := strconv.ParseUint(k, 10, 64)
		el.SetUintKey(u)
	default:
		// A string key is not quoted: it may be a payload.
		return pathElement(fd)
	}
	return el
}

// clonePath copies a path, whose backing array the walk reuses.
func clonePath(path []*validate.FieldPathElement) []*validate.FieldPathElement {
	return append([]*validate.FieldPathElement(nil), path...)
}
