package eventpb

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// JSONValue answers the Value protojson reads, whether the direct reader
// takes the text or leaves it to protojson (a surrogate pair's escape), and
// unset for empty or undecodable text.
func TestJSONValue_AnswersProtojsonsValueOrUnset(t *testing.T) {
	cases := []struct {
		raw  string
		want *structpb.Value
	}{
		{`{"a":[1,"b"]}`, structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"a": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(1), structpb.NewStringValue("b")}}),
		}})},
		{`"\ud83d\ude00"`, structpb.NewStringValue("😀")},
		{`null`, structpb.NewNullValue()},
		{``, nil},
		{`{"a":1,"a":2}`, nil},
		{`1e400`, nil},
	}
	for _, c := range cases {
		got := JSONValue(json.RawMessage(c.raw))
		if c.want == nil {
			require.Nil(t, got, "%q", c.raw)
			continue
		}
		require.True(t, proto.Equal(c.want, got), "%q: %v", c.raw, got)
	}
}
