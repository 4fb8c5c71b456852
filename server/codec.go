package server

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// jsonCodec is Connect's JSON codec with two changes the API promises: the
// JSON Weft emits uses the proto field names (started_at, completed_at; spec
// 001's naming contract), and unknown fields in requests are ignored so older
// servers accept newer clients (spec 004 "Schema Evolution").
type jsonCodec struct {
	name string
}

var (
	jsonMarshal   = protojson.MarshalOptions{UseProtoNames: true}
	jsonUnmarshal = protojson.UnmarshalOptions{DiscardUnknown: true}
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

// Unmarshal implements connect.Codec.
func (c jsonCodec) Unmarshal(data []byte, message any) error {
	m, ok := message.(proto.Message)
	if !ok {
		return fmt.Errorf("json codec: %T is not a proto.Message", message)
	}
	if len(data) == 0 {
		// Connect sends an empty body for an empty message (e.g. GET without a body).
		return nil
	}
	return jsonUnmarshal.Unmarshal(data, m)
}
