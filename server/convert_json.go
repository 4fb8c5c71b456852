package server

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/internal/jsonvalue"
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
	if b, ok := jsonvalue.Append(nil, v); ok {
		return b, nil
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value is not representable as JSON")
	}
	return b, nil
}

// jsonValueOrNull is jsonValue where the field must be set, as in a map
// entry: empty JSON becomes null.
func jsonValueOrNull(raw json.RawMessage) *structpb.Value {
	if v := jsonValue(raw); v != nil {
		return v
	}
	return structpb.NewNullValue()
}

// timeOf answers a Timestamp as a UTC time, zero when unset.
func timeOf(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime().UTC()
}

// objectBox is the google.protobuf.Value of an empty JSON object, its kind
// and its Struct allocated together.
type objectBox struct {
	value  structpb.Value
	kind   structpb.Value_StructValue
	object structpb.Struct
}

// jsonValue is eventpb.JSONValue, answering the empty object {} (an
// activity's usual output) in one allocation: a Struct with no fields, the
// same message on the wire and in JSON as the parsed one.
func jsonValue(raw json.RawMessage) *structpb.Value {
	if string(raw) != "{}" {
		return eventpb.JSONValue(raw)
	}
	b := new(objectBox)
	b.kind.StructValue = &b.object
	b.value.Kind = &b.kind
	return &b.value
}
