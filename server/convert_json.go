package server

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// rawJSON answers a google.protobuf.Value as JSON; nil stays nil (unset).
// A Value with no kind set (possible in binary requests) is JSON null. The
// error never quotes the value: it may be a payload.
func rawJSON(v *structpb.Value) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if v.GetKind() == nil {
		return json.RawMessage("null"), nil
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value is not representable as JSON")
	}
	return b, nil
}

// jsonValue answers JSON as a google.protobuf.Value; empty JSON is unset
// (nil). JSON the engine stored is valid, so an undecodable value cannot
// happen; should it, the field is left unset rather than failing a read.
func jsonValue(raw json.RawMessage) *structpb.Value {
	if len(raw) == 0 {
		return nil
	}
	v := &structpb.Value{}
	if err := protojson.Unmarshal(raw, v); err != nil {
		return nil
	}
	return v
}

// jsonValueOrNull is jsonValue where the field must be set, as in a map
// entry: empty JSON becomes null.
func jsonValueOrNull(raw json.RawMessage) *structpb.Value {
	if v := jsonValue(raw); v != nil {
		return v
	}
	return structpb.NewNullValue()
}

// timestamp answers t as a Timestamp, or nil when t is zero.
func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// timeOf answers a Timestamp as a UTC time, zero when unset.
func timeOf(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime().UTC()
}
