package server

import (
	"fmt"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// jsonCodec is Connect's JSON codec with the changes the API promises: the
// JSON Weft emits uses the proto field names (started_at, completed_at; spec
// 001's naming contract); unknown fields in requests are ignored so older
// servers accept newer clients (docs/semantics.md#schema-evolution); and an enum
// value named in a request that the server does not know is refused, where
// protojson's DiscardUnknown would drop it silently (a misspelt ListRuns
// status filter would otherwise match every run).
//
// The refusal cannot be this codec's error: Connect wraps a codec error as
// invalid_argument before any interceptor runs and keeps none of its
// details. So the codec decodes the rest of the message and marks it
// (markRefused); the validation interceptor answers the mark (decodeRefusal)
// as invalid_argument with a Fault, a correlation id and a
// buf.validate.Violations detail naming each field, as it answers any other
// invalid field.
type jsonCodec struct {
	name string
}

var (
	jsonMarshal = protojson.MarshalOptions{UseProtoNames: true}
	// jsonStrict decodes a request that names only fields and enum values the
	// server knows: the usual case, in one pass.
	jsonStrict = protojson.UnmarshalOptions{}
	// jsonTolerant decodes past unknown fields, and past unknown enum names,
	// which it drops: unknownEnumNames finds those.
	jsonTolerant = protojson.UnmarshalOptions{DiscardUnknown: true}
)

// Name implements connect.Codec.
func (c jsonCodec) Name() string { return c.name }

// Marshal implements connect.Codec.
func (c jsonCodec) Marshal(message any) ([]byte, error) {
	m, ok := message.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("json codec: %T is not a proto.Message", message)
	}
	return jsonMarshal.Marshal(m)
}

// Unmarshal implements connect.Codec. Malformed JSON and values of the wrong
// type are errors; unknown fields are ignored; unknown enum names leave the
// message marked as refused (see jsonCodec).
func (c jsonCodec) Unmarshal(data []byte, message any) error {
	m, ok := message.(proto.Message)
	if !ok {
		return fmt.Errorf("json codec: %T is not a proto.Message", message)
	}
	if len(data) == 0 {
		// Connect sends an empty body for an empty message (e.g. GET without a body).
		return nil
	}
	if jsonStrict.Unmarshal(data, m) == nil {
		return nil
	}
	// An unknown field, an unknown enum name or malformed input: the tolerant
	// pass tells malformed input apart, the walk finds unknown enum names.
	md := m.ProtoReflect().Descriptor()
	proto.Reset(m)
	if err := jsonTolerant.Unmarshal(data, m); err != nil {
		// Refused with the field and the rule, never protojson's text, which
		// quotes the body.
		proto.Reset(m)
		markRefused(m, &validate.Violations{Violations: []*validate.Violation{jsonRefusal(data, md)}})
		return nil
	}
	if v := unknownEnumNames(data, md); len(v) > 0 {
		markRefused(m, &validate.Violations{Violations: v})
	}
	return nil
}

// protoCodec is Connect's binary protobuf codec, except that a body
// protobuf cannot decode is refused as the JSON codec refuses one (see
// jsonCodec): invalid_argument with a Fault, a correlation id and a
// violation naming the field by its proto name, never protobuf's text.
type protoCodec struct{}

var protoUnmarshal = proto.UnmarshalOptions{}

// Name implements connect.Codec.
func (protoCodec) Name() string { return "proto" }

// Marshal implements connect.Codec.
func (c protoCodec) Marshal(message any) ([]byte, error) {
	return c.MarshalAppend(nil, message)
}

// MarshalAppend lets Connect marshal into its pooled buffers.
func (protoCodec) MarshalAppend(dst []byte, message any) ([]byte, error) {
	m, ok := message.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("proto codec: %T is not a proto.Message", message)
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, m)
}

// Unmarshal implements connect.Codec.
func (protoCodec) Unmarshal(data []byte, message any) error {
	m, ok := message.(proto.Message)
	if !ok {
		return fmt.Errorf("proto codec: %T is not a proto.Message", message)
	}
	if protoUnmarshal.Unmarshal(data, m) == nil {
		return nil
	}
	proto.Reset(m)
	markRefused(m, &validate.Violations{Violations: []*validate.Violation{protoRefusal(data, m.ProtoReflect().Descriptor())}})
	return nil
}

// refusalField is the unknown field that marks a decoded message as refused.
// It lies in the range protobuf reserves for its implementation (19000 to
// 19999), so no field of the API, present or future, can have its number; a
// binary request that carries it anyway is refused the same way.
const refusalField protowire.Number = 19999

// markRefused records on m the violations that refuse it, as an unknown
// field holding the encoded buf.validate.Violations.
func markRefused(m proto.Message, v *validate.Violations) {
	b, err := proto.Marshal(v)
	if err != nil {
		b = nil // an empty mark still refuses the message
	}
	r := m.ProtoReflect()
	unknown := protowire.AppendTag(r.GetUnknown(), refusalField, protowire.BytesType)
	r.SetUnknown(protowire.AppendBytes(unknown, b))
}

// refusalOf answers the violations markRefused recorded on m, or nil.
func refusalOf(m proto.Message) *validate.Violations {
	b := m.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		if num == refusalField && typ == protowire.BytesType {
			val, vn := protowire.ConsumeBytes(b)
			if vn < 0 {
				return nil
			}
			v := &validate.Violations{}
			_ = proto.Unmarshal(val, v)
			return v
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil
		}
		b = b[n:]
	}
	return nil
}

// decodeRefusal answers the error for a request message the JSON codec
// refused, or nil: invalid_argument with a Fault and the violations.
func decodeRefusal(msg any) error {
	m, ok := msg.(proto.Message)
	if !ok {
		return nil
	}
	v := refusalOf(m)
	if v == nil {
		return nil
	}
	return newInvalidArgument(v, violationsText(v))
}

// violationsText renders violations as protovalidate renders its errors.
func violationsText(v *validate.Violations) string {
	var lines []string
	for _, pv := range v.GetViolations() {
		lines = append(lines, fmt.Sprintf("%s: %s [%s]",
			protovalidate.FieldPathString(pv.GetField()), pv.GetMessage(), pv.GetRuleId()))
	}
	switch len(lines) {
	case 0:
		return "validation error: the request was refused"
	case 1:
		return "validation error: " + lines[0]
	}
	return "validation errors:\n - " + strings.Join(lines, "\n - ")
}
