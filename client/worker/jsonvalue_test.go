package worker

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestJSONOf_WritesWhatProtojsonWrites(t *testing.T) {
	t.Parallel()
	docs := []string{`null`, `true`, `false`, `0`, `-0`, `1`, `-1.5`, `123456789012`, `1e21`, `1e-7`, `0.000001`,
		`-2.5e-10`, `1.7976931348623157e308`, `""`, `"plain"`, `"q\"b\\s/ é 😀 \u2028"`, `"\b\f\n\r\t\u0001\u001f\u007f"`,
		`[]`, `{}`, `[1,"a",null,[true],{"z":1,"a":[]}]`, `{"b":{"y":2,"x":"1"},"a":"\u0000","":0}`}
	for _, doc := range docs {
		v := &structpb.Value{}
		require.NoError(t, protojson.Unmarshal([]byte(doc), v), doc)
		want, err := protojson.Marshal(v)
		require.NoError(t, err)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, want))
		require.Equal(t, compact.String(), string(jsonOf(v)), doc)
	}
}

func TestJSONOf_AnswersNilForWhatJSONCannotCarry(t *testing.T) {
	t.Parallel()
	require.Nil(t, jsonOf(nil))
	for _, v := range []*structpb.Value{structpb.NewNumberValue(math.NaN()), structpb.NewNumberValue(math.Inf(-1)),
		structpb.NewStringValue("bad \xff"), {}, structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{{}}})} {
		_, err := protojson.Marshal(v)
		require.Error(t, err, "protojson refuses it too")
		require.Nil(t, jsonOf(v))
	}
}

func TestValueOf_ReadsWhatProtojsonReads(t *testing.T) {
	t.Parallel()
	docs := []string{`null`, `true`, `0`, `-12.5e3`, `9007199254740993`, `"s\u00e9\ud83d\ude00\n"`, `[]`, `{}`,
		` { "a" : [1, {"b": null}], "c": "d" } `, `{"x":{"y":{"z":[[],{}]}}}`}
	for _, doc := range docs {
		want := &structpb.Value{}
		require.NoError(t, protojson.Unmarshal([]byte(doc), want), doc)
		got, err := valueOf([]byte(doc))
		require.NoError(t, err, doc)
		require.True(t, proto.Equal(want, got), doc)
	}
	for _, doc := range []string{``, `{`, `[1,]`, `nul`, `"bad \xff"`, `1e999`} {
		_, err := valueOf([]byte(doc))
		require.Error(t, err, doc)
	}
}
