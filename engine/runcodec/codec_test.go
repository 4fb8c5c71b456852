package runcodec

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/testkit/fill"
)

func randomEvent(r *rand.Rand, full bool) *runstate.Event {
	return fill.New[runstate.Event](fill.Filler{Rand: r, Full: full})
}

func randomState(r *rand.Rand, full bool) *runstate.State {
	return fill.New[runstate.State](fill.Filler{Rand: r, Full: full})
}

func TestEventCodec_RoundTripsEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 16))
	for i := range 3000 {
		ev := randomEvent(r, i%3 == 0)
		var got runstate.Event
		require.NoError(t, DecodeEvent(AppendEvent(nil, ev), &got))
		require.Equal(t, *ev, got)
	}
}

func TestStateCodec_RoundTripsEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 16))
	for i := range 1000 {
		s := randomState(r, i%3 == 0)
		var got runstate.State
		require.NoError(t, DecodeState(AppendState(nil, s), &got))
		require.Equal(t, *s, got)
	}
}

// jsonEqual compares what JSON keeps of two values: the old format omits
// empty values, so a nil and an empty slice are the same record.
func jsonEqual(t *testing.T, want, got any) {
	t.Helper()
	a, err := json.Marshal(want)
	require.NoError(t, err)
	b, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(a), string(b))
}

func TestEventCodec_OldJSONRecordsStillDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 16))
	for range 500 {
		ev := randomEvent(r, false)
		old, err := json.Marshal(ev)
		require.NoError(t, err)
		var want, got runstate.Event
		require.NoError(t, json.Unmarshal(old, &want))
		require.NoError(t, DecodeEvent(old, &got))
		require.Equal(t, want, got)
		jsonEqual(t, ev, &got)
	}
}

func TestStateCodec_OldJSONCheckpointsStillDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 16))
	for range 300 {
		s := randomState(r, false)
		old, err := json.Marshal(s)
		require.NoError(t, err)
		var want, got runstate.State
		require.NoError(t, json.Unmarshal(old, &want))
		require.NoError(t, DecodeState(old, &got))
		require.Equal(t, want, got)
	}
}

func TestCodec_BinaryAndJSONDecodeToTheSameValue(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 16))
	for range 500 {
		ev := randomEvent(r, false)
		old, err := json.Marshal(ev)
		require.NoError(t, err)
		var fromJSON, fromBinary runstate.Event
		require.NoError(t, DecodeEvent(old, &fromJSON))
		require.NoError(t, DecodeEvent(AppendEvent(nil, ev), &fromBinary))
		jsonEqual(t, &fromJSON, &fromBinary)
	}
}

func TestCodec_UnknownFieldsAreSkipped(t *testing.T) {
	ev := randomEvent(rand.New(rand.NewPCG(6, 16)), true)
	b := AppendEvent(nil, ev)
	b = protowire.AppendTag(b, 999, protowire.BytesType)
	b = protowire.AppendString(b, "from a newer weftd")
	b = protowire.AppendTag(b, 998, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 7)
	var got runstate.Event
	require.NoError(t, DecodeEvent(b, &got))
	require.Equal(t, *ev, got)
}

func TestCodec_RefusesWhatItCannotRead(t *testing.T) {
	var ev runstate.Event
	var s runstate.State
	for name, b := range map[string][]byte{
		"empty":            nil,
		"unknown format":   {0x7f, 1, 2},
		"truncated":        AppendEvent(nil, randomEvent(rand.New(rand.NewPCG(7, 16)), true))[:40],
		"wrong wire type":  {FormatEvent, 0x08, 0x01}, // event_type as a varint
		"checkpoint bytes": AppendState(nil, randomState(rand.New(rand.NewPCG(8, 16)), true)),
	} {
		require.Error(t, DecodeEvent(b, &ev), name)
	}
	require.ErrorIs(t, DecodeState([]byte{FormatEvent}, &s), ErrUnknownFormat)
}

func TestCodec_IsSmallerThanJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 16))
	for range 200 {
		ev := randomEvent(r, false)
		old, err := json.Marshal(ev)
		require.NoError(t, err)
		require.Less(t, len(AppendEvent(nil, ev)), len(old))
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(AppendEvent(nil, randomEvent(rand.New(rand.NewPCG(10, 16)), true)))
	f.Add([]byte(`{"event_type":"RunStarted","run_seq":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ev runstate.Event
		if DecodeEvent(b, &ev) != nil || !(len(b) > 0 && b[0] == FormatEvent) {
			return
		}
		var again runstate.Event // what decodes re-encodes to the same value
		require.NoError(t, DecodeEvent(AppendEvent(nil, &ev), &again))
		require.Equal(t, ev, again)
	})
}

func FuzzDecodeState(f *testing.F) {
	f.Add(AppendState(nil, randomState(rand.New(rand.NewPCG(11, 16)), true)))
	f.Add(AppendState(nil, benchState())) // compressed
	f.Add([]byte(`{"version":1,"run_id":"r","status":"RUNNING"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s runstate.State
		if DecodeState(b, &s) != nil || !IsCheckpoint(b) {
			return
		}
		var again runstate.State
		require.NoError(t, DecodeState(AppendState(nil, &s), &again))
		require.Equal(t, s, again)
	})
}

func TestOutboxRef_RoundTripsItsTenantAndLastEvent(t *testing.T) {
	for _, ref := range []OutboxRef{{TenantID: "tenant-a"}, {TenantID: "", LastSeq: 7}, {TenantID: "é:%", LastSeq: 1 << 40}} {
		b := AppendOutboxRef(nil, ref)
		require.True(t, IsOutboxRef(b))
		got, err := DecodeOutboxRef(b)
		require.NoError(t, err)
		require.Equal(t, ref, got)
	}
	_, err := DecodeOutboxRef([]byte(`{"tenant_id":"t","event":{}}`))
	require.ErrorIs(t, err, ErrUnknownFormat)
	_, err = DecodeOutboxRef([]byte{FormatOutboxRef})
	require.Error(t, err, "a reference without its tenant")
	_, err = DecodeOutboxRef([]byte{FormatOutboxRef, 0x0a, 0x01, 't', 0x12, 0x01, 'x'})
	require.Error(t, err, "a last run_seq that is not a number")
}

func TestOutboxRun_RoundTripsItsTenantAndFirstEvent(t *testing.T) {
	for _, r := range []OutboxRun{{TenantID: "tenant-a", From: 1}, {TenantID: "", From: 7}, {TenantID: "é:%", From: 1 << 40}} {
		b := AppendOutboxRun(nil, r)
		require.True(t, IsOutboxRun(b))
		require.False(t, IsOutboxRef(b), "told from an older weftd's reference by its format")
		got, err := DecodeOutboxRun(b)
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
	_, err := DecodeOutboxRun(AppendOutboxRef(nil, OutboxRef{TenantID: "t"}))
	require.ErrorIs(t, err, ErrUnknownFormat)
	_, err = DecodeOutboxRun([]byte{FormatOutboxRun, 0x10, 0x01})
	require.ErrorContains(t, err, "no tenant")
	_, err = DecodeOutboxRun([]byte{FormatOutboxRun, 0x0a, 0x01, 't'})
	require.ErrorContains(t, err, "no first run_seq")
	_, err = DecodeOutboxRun([]byte{FormatOutboxRun, 0x0a, 0x01, 't', 0x12, 0x01, 'x'})
	require.Error(t, err, "a first run_seq that is not a number")
}

// storedJSONWant is what the export wrote of a stored event before
// AppendStoredEventJSON: the event DecodeEvent reads, as encoding/json
// writes it (AppendEventJSON's output, which was that byte for byte).
func storedJSONWant(t *testing.T, stored []byte) (*runstate.Event, []byte, error, error) {
	t.Helper()
	var ev runstate.Event
	if err := DecodeEvent(stored, &ev); err != nil {
		return nil, nil, err, nil
	}
	js, err := json.Marshal(&ev)
	return &ev, js, nil, err
}

// requireStoredJSON checks AppendStoredEventJSON on stored against
// storedJSONWant: the same JSON and envelope, DecodeEvent's error, or an
// error where encoding/json has one.
func requireStoredJSON(t *testing.T, stored []byte) {
	t.Helper()
	ev, want, decodeErr, jsonErr := storedJSONWant(t, stored)
	prefix := []byte("prefix")
	got, env, err := AppendStoredEventJSON(prefix[:len(prefix):len(prefix)], stored)
	switch {
	case decodeErr != nil:
		require.EqualError(t, err, decodeErr.Error(), "DecodeEvent's error")
		return
	case jsonErr != nil:
		require.ErrorContains(t, err, "as JSON", "encoding/json refuses this event: so must AppendStoredEventJSON")
		return
	}
	require.NoError(t, err)
	require.Equal(t, "prefix"+string(want), string(got))
	require.Equal(t, EventEnvelope{Type: []byte(ev.Type), RunID: []byte(ev.RunID), ID: ev.ID, Seq: ev.Seq},
		EventEnvelope{Type: []byte(string(env.Type)), RunID: []byte(string(env.RunID)), ID: env.ID, Seq: env.Seq})
}

// escapingEvent gives ev strings and raw JSON that every escaping rule meets.
func escapingEvent(ev *runstate.Event, i int) {
	switch i % 3 {
	case 0: // strings every escaping rule meets
		ev.Data.Reason = "<a href=\"x\">&\\\n\t\b\f\r\x01\x1f é \u2028 \u2029 \xff ✓"
		ev.Data.Output = json.RawMessage(" { \"k\" : [ 1 , \"<&>\u2028\" ] } ")
	case 1: // compact raw JSON: as it is, unless it holds what must be escaped
		ev.Data.Output = json.RawMessage([]string{`{"k":[1,"x"]}`, `{"k":"<&>"}`, "[\"\u2028\"]", `"a\u003cb"`}[i%4])
	}
}

func TestStoredEventJSON_IsWhatEncodingJSONWritesOfTheDecodedEventByteForByte(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 16))
	for i := range 5000 {
		ev := randomEvent(r, i%4 == 0)
		escapingEvent(ev, i)
		stored := AppendEvent(nil, ev)
		requireStoredJSON(t, stored)
		if _, err := json.Marshal(ev); err == nil { // written directly, not decoded and encoded again
			_, err := eventJSON.appendJSON(nil, stored[1:], nil)
			require.NoError(t, err)
		}
	}
}

// wireFields splits a message's wire bytes into its fields, each whole.
func wireFields(t *testing.T, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		var f field
		rest, err := f.read(b)
		require.NoError(t, err)
		out = append(out, b[:len(b)-len(rest)])
		b = rest
	}
	return out
}

// TestStoredEventJSON_FieldsNotAsWrittenAreReadAsDecodeEventReadsThem holds
// the JSON of events whose wire fields AppendEvent would not write — out of
// order, repeated (overwritten, merged, appended), unknown, damaged — to
// that of the event DecodeEvent reads from them.
func TestStoredEventJSON_FieldsNotAsWrittenAreReadAsDecodeEventReadsThem(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 16))
	for i := range 3000 {
		ev := randomEvent(r, i%4 == 0)
		escapingEvent(ev, i)
		fields := wireFields(t, AppendEvent(nil, ev)[1:])
		switch i % 6 {
		case 0: // shuffled
			r.Shuffle(len(fields), func(a, b int) { fields[a], fields[b] = fields[b], fields[a] })
		case 1: // a field repeated, with another's value
			other := wireFields(t, AppendEvent(nil, randomEvent(r, true))[1:])
			fields = append(fields, other[r.IntN(len(other))])
		case 2: // unknown fields among the known
			unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "newer")
			unknown = protowire.AppendVarint(protowire.AppendTag(unknown, 12345, protowire.VarintType), 7)
			at := r.IntN(len(fields) + 1)
			fields = append(fields[:at], append([][]byte{unknown}, fields[at:]...)...)
		case 3: // the data in two parts, which a reader merges
			var data []byte
			for _, f := range wireFields(t, AppendEvent(nil, randomEvent(r, true))[1:]) {
				if n, _, _ := protowire.ConsumeTag(f); n == 13 {
					data = f
				}
			}
			fields = append(fields, data)
		case 4: // a byte changed
			all := append([]byte(nil), joinFields(fields)...)
			if len(all) > 0 {
				all[r.IntN(len(all))] ^= byte(1 + r.IntN(255))
			}
			fields = [][]byte{all}
		case 5: // cut short
			all := joinFields(fields)
			fields = [][]byte{all[:r.IntN(len(all)+1)]}
		}
		requireStoredJSON(t, append([]byte{FormatEvent}, joinFields(fields)...))
	}
}

func joinFields(fields [][]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func TestStoredEventJSON_OldJSONEventsAreWrittenAsEncodingJSONWritesThem(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 16))
	for i := range 500 {
		ev := randomEvent(r, false)
		if i%2 == 0 { // a zone the binary form would not keep
			ev.EmittedAt = ev.EmittedAt.In(time.FixedZone("", 2*3600))
		}
		old, err := json.Marshal(ev)
		require.NoError(t, err)
		requireStoredJSON(t, old)
	}
}

func TestStoredEventJSON_RefusesWhatEncodingJSONRefuses(t *testing.T) {
	for name, ev := range map[string]*runstate.Event{
		"invalid raw output": {Data: runstate.EventData{Output: json.RawMessage(`{"k":`)}},
		"year beyond 9999":   {EmittedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, wantErr := json.Marshal(ev)
		require.Error(t, wantErr, name)
		_, _, err := AppendStoredEventJSON(nil, AppendEvent(nil, ev))
		require.ErrorContains(t, err, "as JSON", name)
	}
	_, _, err := AppendStoredEventJSON(nil, []byte{0x7f})
	require.ErrorIs(t, err, ErrUnknownFormat)
}

func FuzzStoredEventJSON(f *testing.F) {
	f.Add(AppendEvent(nil, randomEvent(rand.New(rand.NewPCG(15, 16)), true)))
	f.Add([]byte(`{"event_type":"RunStarted","run_seq":3}`))
	f.Fuzz(func(t *testing.T, stored []byte) {
		requireStoredJSON(t, stored)
	})
}

// An event's JSON is written with no allocation but its envelope's id.
func TestStoredEventJSON_AllocatesOnlyTheEventID(t *testing.T) {
	ev := benchEvent()
	ev.Data.Reason = "é ünïcode ✓ \u2028 <&>"
	ev.Data.Attempt = &runstate.Attempt{LogicalAttempt: 1, Outcome: runstate.AttemptSucceeded, WorkerID: "w"}
	ev.Data.EvidenceRefs = []string{"a", ""}
	stored := AppendEvent(nil, ev)
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := AppendStoredEventJSON(buf, stored); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 1.0, allocs)
}

func TestEventJSON_TimesAreWrittenAsTimeMarshalJSONWritesThem(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	for i := range 200_000 {
		sec := r.Int64N(400_000_000_000) - 200_000_000_000 // years about -4000 to 8300, and beyond 9999 below
		nsec := []int64{0, r.Int64N(1e9), r.Int64N(1e3) * 1e6, r.Int64N(1e6) * 1e3, 1e8, 999_999_999}[i%6]
		tm := time.Unix(sec, nsec).UTC()
		if i%7 == 0 {
			tm = time.Date(9999-r.IntN(3), time.December, 31, 23, 59, 59, int(nsec), time.UTC).Add(time.Duration(r.IntN(3)) * time.Second)
		}
		if i%11 == 0 {
			tm = time.Date(r.IntN(3)-1, time.January, 1, 0, 0, 0, int(nsec), time.UTC)
		}
		if i%13 == 0 {
			tm = tm.In(time.FixedZone("", 3600))
		}
		want, wantErr := tm.MarshalJSON()
		got, err := appendJSONTime(nil, tm)
		if wantErr != nil {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%v", tm)
	}
	got, err := appendJSONTime(nil, time.Time{})
	require.NoError(t, err)
	require.Equal(t, `"0001-01-01T00:00:00Z"`, string(got))
}
