package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The rule_ids of the violation a request answers when its body cannot be
// decoded at all. Their messages name the field (by its proto name, in the
// violation's field path) and the rule, and never quote the request: a
// value, a map key or an unknown name may be a payload.
const (
	// RuleJSONSyntax: the body is not JSON.
	RuleJSONSyntax = "json.syntax"
	// RuleJSONUTF8: the body is not valid UTF-8.
	RuleJSONUTF8 = "json.utf8"
	// RuleJSONObject: the body, or a message-typed field, is not a JSON object.
	RuleJSONObject = "json.object"
	// RuleJSONDuplicate: a field (under either of its names) or a map key
	// appears twice.
	RuleJSONDuplicate = "json.duplicate"
	// RuleJSONValue: a field's value is not one its type accepts in proto JSON.
	RuleJSONValue = "json.value"
	// RuleProtoWire: the binary body is not valid protobuf wire data.
	RuleProtoWire = "proto.wire"
	// RuleProtoUTF8: a string field of a binary body is not valid UTF-8.
	RuleProtoUTF8 = "proto.utf8"
)

// jsonRefusal answers the violation of a JSON body protojson refused as md:
// the path of the first field whose value cannot be decoded, found by asking
// protojson about each field on its own. It never fails: a problem it cannot
// place is a violation of the whole body.
func jsonRefusal(data []byte, md protoreflect.MessageDescriptor) *validate.Violation {
	switch {
	case !utf8.Valid(data):
		return violation(nil, RuleJSONUTF8, "the request body is not valid UTF-8")
	case !json.Valid(data):
		return violation(nil, RuleJSONSyntax, "the request body is not valid JSON")
	}
	if v := locateJSON(data, md, nil); v != nil {
		return v
	}
	return violation(nil, RuleJSONValue, "the request body is not valid proto JSON for "+string(md.FullName()))
}

// violation builds one violation; path nil names the whole request.
func violation(path []*validate.FieldPathElement, rule, message string) *validate.Violation {
	v := &validate.Violation{RuleId: proto.String(rule), Message: proto.String(message)}
	if len(path) > 0 {
		v.Field = &validate.FieldPath{Elements: clonePath(path)}
	}
	return v
}

// member is one name and raw value of a JSON object, in body order.
type member struct {
	name  string
	value json.RawMessage
}

// members splits a JSON object into its members, duplicates kept; ok is
// false when data is not an object.
func members(data []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out = append(out, member{name: name, value: raw})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, false
	}
	return out, true
}

// locateJSON answers the violation of the first member of a JSON object
// that md cannot take, or nil when each member decodes on its own.
func locateJSON(data []byte, md protoreflect.MessageDescriptor, path []*validate.FieldPathElement) *validate.Violation {
	ms, ok := members(data)
	if !ok {
		return violation(path, RuleJSONObject, "must be a JSON object")
	}
	seen := map[protoreflect.FieldNumber]bool{}
	oneofs := map[protoreflect.FullName]bool{}
	for _, m := range ms {
		fd := fieldByJSONName(md, m.name)
		if fd == nil {
			continue // unknown fields are ignored
		}
		fpath := append(path, pathElement(fd))
		if seen[fd.Number()] {
			return violation(fpath, RuleJSONDuplicate, "the field appears more than once")
		}
		seen[fd.Number()] = true
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && string(bytes.TrimSpace(m.value)) != "null" {
			if oneofs[od.FullName()] {
				return violation(fpath, RuleJSONDuplicate, "another field of oneof "+string(od.Name())+" is set")
			}
			oneofs[od.FullName()] = true
		}
		if v := locateField(md, fd, m.value, path); v != nil {
			return v
		}
	}
	return nil
}

// fieldByJSONName finds the field protojson reads under name.
func fieldByJSONName(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(name); fd != nil {
		return fd
	}
	return md.Fields().ByTextName(name)
}

// locateField answers the violation of one field's value, or nil when
// protojson decodes it.
func locateField(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, raw json.RawMessage, path []*validate.FieldPathElement) *validate.Violation {
	if decodesAlone(md, fd, raw) {
		return nil
	}
	fpath := append(path, pathElement(fd))
	switch {
	case fd.IsList():
		return locateList(md, fd, raw, path)
	case fd.IsMap():
		return locateMap(md, fd, raw, fpath)
	case walkable(fd) && isObject(raw):
		if v := locateJSON(raw, fd.Message(), fpath); v != nil {
			return v
		}
	}
	return violation(fpath, RuleJSONValue, "must be "+expected(fd))
}

// locateList places the first element of a list protojson refuses.
func locateList(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, raw json.RawMessage, path []*validate.FieldPathElement) *validate.Violation {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return violation(append(path, pathElement(fd)), RuleJSONValue, "must be a JSON array")
	}
	for i, item := range items {
		ipath := append(path, indexElement(fd, i))
		wrapped, _ := json.Marshal([]json.RawMessage{item})
		if decodesAlone(md, fd, wrapped) {
			continue
		}
		if walkable(fd) && isObject(item) {
			if v := locateJSON(item, fd.Message(), ipath); v != nil {
				return v
			}
		}
		return violation(ipath, RuleJSONValue, "must be "+expected(fd))
	}
	return violation(append(path, pathElement(fd)), RuleJSONValue, "must be a JSON array of "+expected(fd))
}

// locateMap places a map's refused entry at the map field itself: its key
// may be a payload and is never quoted.
func locateMap(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, raw json.RawMessage, fpath []*validate.FieldPathElement) *validate.Violation {
	ms, ok := members(raw)
	if !ok {
		return violation(fpath, RuleJSONObject, "must be a JSON object")
	}
	keys := map[string]bool{}
	for _, m := range ms {
		if keys[m.name] {
			return violation(fpath, RuleJSONDuplicate, "a key appears more than once")
		}
		keys[m.name] = true
	}
	vd := fd.MapValue()
	for _, m := range ms {
		entry, _ := json.Marshal(map[string]json.RawMessage{m.name: m.value})
		if decodesAlone(md, fd, entry) {
			continue
		}
		if walkable(vd) && isObject(m.value) {
			if v := locateJSON(m.value, vd.Message(), fpath); v != nil {
				return v
			}
		}
		return violation(fpath, RuleJSONValue, "has an entry whose key or value is not valid: values must be "+expected(vd))
	}
	return violation(fpath, RuleJSONValue, "must be a JSON object")
}

// decodesAlone reports whether protojson decodes {"<fd>": raw} as md.
func decodesAlone(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, raw json.RawMessage) bool {
	name, _ := json.Marshal(fd.TextName())
	body := make([]byte, 0, len(name)+len(raw)+3)
	body = append(append(append(append(body, '{'), name...), ':'), raw...)
	body = append(body, '}')
	return jsonTolerant.Unmarshal(body, newMessage(md)) == nil
}

// newMessage answers an empty message of md: of its generated type where
// one is registered (every request message is), which decodes as the codec
// does; dynamicpb otherwise.
func newMessage(md protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(md)
}

// walkable reports whether fd holds a message whose JSON form is an object
// of its fields (google.protobuf's types have forms of their own).
func walkable(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && fd.Message().FullName().Parent() != "google.protobuf"
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// expected says what proto JSON accepts for a value of fd's type.
func expected(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "a JSON string"
	case protoreflect.BytesKind:
		return "a base64 JSON string"
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.EnumKind:
		return "a name or number of enum " + string(fd.Enum().FullName())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a JSON number"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if !walkable(fd) {
			return "the proto JSON form of " + string(fd.Message().FullName())
		}
		return "a JSON object (" + string(fd.Message().FullName()) + ")"
	}
	return fmt.Sprintf("an integer in the range of %s (a JSON number or a string of digits)", fd.Kind())
}

// protoRefusal answers the violation of a binary body proto.Unmarshal
// refused as md: the path of the first field whose bytes are not valid wire
// data, or whose string is not valid UTF-8.
func protoRefusal(data []byte, md protoreflect.MessageDescriptor) *validate.Violation {
	if v := locateWire(data, md, nil, 0); v != nil {
		return v
	}
	return violation(nil, RuleProtoWire, "the request body is not valid protobuf for "+string(md.FullName()))
}

// maxWireDepth bounds the nesting locateWire follows, as protobuf bounds
// the nesting it decodes.
const maxWireDepth = 100

// locateWire walks a message's wire data as md and answers the first
// problem, or nil.
func locateWire(b []byte, md protoreflect.MessageDescriptor, path []*validate.FieldPathElement, depth int) *validate.Violation {
	if depth > maxWireDepth {
		return violation(path, RuleProtoWire, "nests messages too deeply")
	}
	counts := map[protoreflect.FieldNumber]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return violation(path, RuleProtoWire, "is not valid protobuf wire data (a field tag)")
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		var fpath []*validate.FieldPathElement
		if fd != nil {
			fpath = append(path, pathElement(fd))
			if fd.IsList() {
				fpath = append(path, indexElement(fd, counts[num]))
			}
			counts[num]++
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			if fpath == nil {
				fpath = path
			}
			return violation(fpath, RuleProtoWire, "is not valid protobuf wire data")
		}
		value := b[:n]
		b = b[n:]
		if fd == nil || typ != protowire.BytesType {
			continue // unknown fields and mismatched wire types are kept as unknown
		}
		if v := checkBytesField(fd, value, fpath, depth); v != nil {
			return v
		}
	}
	return nil
}

// checkBytesField checks one length-delimited value of a known field.
func checkBytesField(fd protoreflect.FieldDescriptor, value []byte, fpath []*validate.FieldPathElement, depth int) *validate.Violation {
	inner, _ := protowire.ConsumeBytes(value)
	switch {
	case fd.Kind() == protoreflect.StringKind:
		if !utf8.Valid(inner) {
			return violation(fpath, RuleProtoUTF8, "is not valid UTF-8")
		}
	case fd.IsMap():
		// An entry's problem is placed at the map: its key may be a payload.
		if v := locateWire(inner, fd.Message(), nil, depth+1); v != nil {
			return violation(fpath, v.GetRuleId(), "has an entry that "+v.GetMessage())
		}
	case fd.Message() != nil:
		return locateWire(inner, fd.Message(), fpath, depth+1)
	case fd.IsList():
		if !packedValid(fd, inner) {
			return violation(fpath, RuleProtoWire, "is not valid packed protobuf data")
		}
	}
	return nil
}

// packedValid reports whether b is a whole number of fd's scalar values.
func packedValid(fd protoreflect.FieldDescriptor, b []byte) bool {
	for len(b) > 0 {
		var n int
		switch fd.Kind() {
		case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
			_, n = protowire.ConsumeFixed32(b)
		case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
			_, n = protowire.ConsumeFixed64(b)
		default:
			_, n = protowire.ConsumeVarint(b)
		}
		if n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}
