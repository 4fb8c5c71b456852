package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
)

// rawJSON: nil stays unset, a Value with no kind is null, what jsonvalue
// writes directly is answered as written, and what JSON cannot carry is an
// error that does not quote the value.
func TestRawJSON_AnswersUnsetNullTheValueOrAnErrorWithoutTheValue(t *testing.T) {
	t.Parallel()
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

// A timestamp written into its message's block is eventpb.Timestamp's:
// nil for the zero time, else the same seconds and nanoseconds.
func TestTimestampIn_IsEventpbsTimestamp(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Time{{}, time.Unix(0, 0), time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 1, time.FixedZone("x", 3600)), time.Now()} {
		var dst timestamppb.Timestamp
		got, want := eventpb.TimestampIn(&dst, at), eventpb.Timestamp(at)
		if want == nil {
			require.Nil(t, got, "%v", at)
			continue
		}
		require.True(t, proto.Equal(want, got), "%v: %v, want %v", at, got, want)
	}
}

// Tasks converted together are each their own message, with their own
// deadline.
func TestTasksProto_EachTaskIsItsOwnMessage(t *testing.T) {
	t.Parallel()
	a, b := &engine.Task{Token: "a", Deadline: time.Unix(100, 0)}, &engine.Task{Token: "b", Deadline: time.Unix(200, 0)}
	got := tasksProto([]*engine.Task{a, b, {Token: "c"}})
	require.Len(t, got, 3)
	require.Equal(t, []string{"a", "b", "c"}, []string{got[0].GetTaskToken(), got[1].GetTaskToken(), got[2].GetTaskToken()})
	require.Equal(t, int64(100), got[0].GetDeadline().GetSeconds())
	require.Equal(t, int64(200), got[1].GetDeadline().GetSeconds())
	require.Nil(t, got[2].GetDeadline())
	require.Empty(t, tasksProto(nil))
}
