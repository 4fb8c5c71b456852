package worker

import (
	"encoding/json"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/internal/jsonvalue"
)

// The worker turns every task's input into JSON for its activity, and the
// activity's JSON output into a Value for its report. protojson does both
// through reflection; these do the same directly (the same JSON text, and
// the same Value for the JSON that encoding/json writes), which a no-op
// activity's profile showed costs a few percent of a worker's CPU.

// jsonOf answers a JSON value's encoding; nil for none, and for a value JSON
// cannot carry (NaN, an infinity, a string that is not UTF-8), as protojson.
// What jsonvalue.Append leaves to protojson, protojson writes.
func jsonOf(v *structpb.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	if b, ok := jsonvalue.Append(nil, v); ok {
		return b
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// valueOf answers the Value of a JSON document (an activity's output, which
// encoding/json wrote). encoding/json reads a valid UTF-8 document as protojson
// would, except that of an object's repeated key it keeps the last where
// protojson refuses the document; what encoding/json refuses goes through
// protojson, which refuses what a Value cannot hold.
func valueOf(doc []byte) (*structpb.Value, error) {
	var x any
	if err := json.Unmarshal(doc, &x); err == nil && utf8.Valid(doc) {
		if v, err := structpb.NewValue(x); err == nil {
			return v, nil
		}
	}
	v := &structpb.Value{}
	return v, protojson.Unmarshal(doc, v)
}
