package server

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// fuzzMarker is planted in the seeds: no refusal may quote it.
const fuzzMarker = "QQMARKQQ"

// fuzzTargets are request messages with maps, payloads, nested messages,
// enums and lists.
func fuzzTargets() []proto.Message {
	return []proto.Message{&weftv1.SignalRunRequest{}, &weftv1.SubmitRunRequest{}, &weftv1.ListRunsRequest{},
		&weftv1.CompleteTaskRequest{}, &weftv1.PollTasksRequest{}}
}

// requireCleanRefusal: a refused message carries violations whose text is
// valid UTF-8 and never quotes the marker.
func requireCleanRefusal(t *testing.T, m proto.Message) {
	v := refusalOf(m)
	if v == nil {
		return
	}
	require.NotEmpty(t, v.GetViolations())
	text := violationsText(v) + prototext.Format(v)
	require.True(t, utf8.ValidString(text))
	require.NotContains(t, text, fuzzMarker)
}

// FuzzJSONCodec_NeverFailsNeverQuotes: whatever the body, the JSON codec
// never answers an error (which would lose the Fault), refuses exactly what
// protojson cannot decode (plus unknown enum names), and its refusal never
// quotes the body.
func FuzzJSONCodec_NeverFailsNeverQuotes(f *testing.F) {
	for _, s := range []string{
		`{"run_id":"r","signal_name":"s","payload":{"` + fuzzMarker + `":1,"` + fuzzMarker + `":2}}`,
		`{"definition":{"plan_id":"p","actions":[{"id":"a","retry":{"maxAttempts":"` + fuzzMarker + `"}}]}}`,
		`{"statuses":["` + fuzzMarker + `"],"created_after":"` + fuzzMarker + `"}`,
		`{"output":{"k":[1,2,{"` + fuzzMarker + `":null}]},"artifacts":[{"name":5}]}`,
		`{"activities":[{"name":"` + fuzzMarker + "\xff" + `"}],"max_tasks":"x"}`,
		`[1]`, `{`, `{"run_id":"a","runId":"b"}`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range fuzzTargets() {
			m = m.ProtoReflect().New().Interface()
			require.NoError(t, jsonCodec{name: "json"}.Unmarshal(data, m))
			probe := m.ProtoReflect().New().Interface()
			decodes := len(data) == 0 || jsonTolerant.Unmarshal(data, probe) == nil
			if !decodes {
				require.NotNil(t, refusalOf(m), "an undecodable body is refused")
			}
			requireCleanRefusal(t, m)
		}
	})
}

// FuzzProtoCodec_NeverFailsNeverQuotes: the binary codec refuses exactly
// what protobuf cannot decode, with a violation that never quotes the body.
func FuzzProtoCodec_NeverFailsNeverQuotes(f *testing.F) {
	seed := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		require.NoError(f, err)
		return b
	}
	f.Add(seed(&weftv1.SignalRunRequest{RunId: fuzzMarker, SignalName: "s"}))
	f.Add(seed(&weftv1.ListRunsRequest{Statuses: []weftv1.RunStatus{1, 2}, PlanId: fuzzMarker}))
	f.Add(append(seed(&weftv1.SignalRunRequest{RunId: "r"}), 0x0a, 0x03, 'Q', 0xff, 'Q'))
	f.Add([]byte("\x0a\x08QQMARKQQ\xff"))
	f.Add([]byte{0x0a})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range fuzzTargets() {
			m = m.ProtoReflect().New().Interface()
			require.NoError(t, protoCodec{}.Unmarshal(data, m))
			probe := m.ProtoReflect().New().Interface()
			if proto.Unmarshal(data, probe) != nil {
				require.NotNil(t, refusalOf(m), "an undecodable body is refused")
			}
			requireCleanRefusal(t, m)
		}
	})
}

// FuzzFrameLimit_HandsOutAPrefixOrRefuses: whatever the body and read
// sizes, the envelope reader hands out a prefix of the body and ends with
// io.EOF, or refuses with a Connect error (never another error Connect would
// answer as internal).
func FuzzFrameLimit_HandsOutAPrefixOrRefuses(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x0a\x0a\x01x"), uint8(3), true)
	f.Add([]byte("\x00\x00\x00"), uint8(1), false)
	f.Add(frames(2, 3), uint8(7), false)
	f.Add([]byte("\x01\x00\x00\x00\x01x"), uint8(5), true)
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8, single bool) {
		fl := &frameLimit{body: io.NopCloser(bytes.NewReader(body)), limit: 64, single: single}
		buf := make([]byte, int(chunk)%16+1)
		var got []byte
		var err error
		for range 1 << 16 {
			var n int
			n, err = fl.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		require.True(t, bytes.HasPrefix(body, got))
		var cerr *connect.Error
		if !errors.Is(err, io.EOF) {
			require.ErrorAs(t, err, &cerr)
			require.Equal(t, connect.CodeInvalidArgument, cerr.Code())
		}
	})
}
