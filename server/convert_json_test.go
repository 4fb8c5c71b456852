package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// rawJSON: nil stays unset, a Value with no kind is null, what jsonvalue
// writes directly is answered as written, and what JSON cannot carry is an
// error that does not quote the value.
func TestRawJSON_AnswersUnsetNullTheValueOrAnErrorWithoutTheValue(t *testing.T) {
	got, err := rawJSON(nil)
	require.NoError(t, err)
	require.Nil(t, got)
	got, err = rawJSON(&structpb.Value{})
	require.NoError(t, err)
	require.Equal(t, "null", string(got))
	v, err := structpb.NewValue(map[string]any{"b": []any{1.0, "x"}, "a": nil})
	require.NoError(t, err)
	got, err = rawJSON(v)
	require.NoError(t, err)
	require.Equal(t, `{"a":null,"b":[1,"x"]}`, string(got))
	_, err = rawJSON(structpb.NewStringValue("secret \xff"))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret")
}

// BenchmarkRawJSON is a worker's output, written directly and by protojson.
func BenchmarkRawJSON(b *testing.B) {
	v, err := structpb.NewValue(map[string]any{"rows": 42.0, "table": "orders", "ok": true, "ids": []any{"a", "b"}})
	require.NoError(b, err)
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = rawJSON(v)
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = protojson.Marshal(v)
		}
	})
}
