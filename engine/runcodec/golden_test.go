package runcodec

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

// goldenCase is one stored record as a weftd wrote it: its value (as
// encoding/json writes it), its stored bytes, and for an event the JSON the
// event bus carries. testdata/golden.json was written by the hand-written
// codec this package had before its field tables were generated
// (commit 10d2b06), and is never rewritten: a record an older weftd stored
// must load, and the same value must store to the same bytes. A record kind
// added later (the event group, the event group of deltas, a grouped outbox reference, a run's
// outbox entry, the deadline index entry, a task's deadline_indexed, a checkpoint's deadlines, a
// compressed checkpoint, a step's claim tokens in their compact form, an event group that
// derives its event ids, one that derives its run_id from its key) has its cases
// appended, as the weftd that introduced it wrote them.
type goldenCase struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Value   json.RawMessage `json:"value"`
	Stored  string          `json:"stored"`
	BusJSON json.RawMessage `json:"bus_json,omitempty"`
	// Run is the run whose key holds the record, which its reader names
	// (an event group from FormatEventDeltasRun on).
	Run string `json:"run,omitempty"`
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden.json")
	require.NoError(t, err)
	var cases []goldenCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	return cases
}

// goldenCodec is one record kind's encode and decode, over values decoded
// from their JSON.
type goldenCodec struct {
	value  func() any // a new value to decode the case's JSON into
	encode func(v any) []byte
	decode func(b []byte, run string) (any, error)
}

var goldenCodecs = map[string]goldenCodec{
	"event": {
		value:  func() any { return &runstate.Event{} },
		encode: func(v any) []byte { return AppendEvent(nil, v.(*runstate.Event)) },
		decode: func(b []byte, _ string) (any, error) {
			var ev runstate.Event
			err := DecodeEvent(b, &ev)
			return &ev, err
		},
	},
	"event_group": {
		value: func() any { return &[]runstate.Event{} },
		encode: func(v any) []byte {
			b, _ := appendGroupRecord(nil, keyRun(*v.(*[]runstate.Event)), *v.(*[]runstate.Event), nil)
			return b
		},
		decode: func(b []byte, run string) (any, error) { evs, err := DecodeEvents(b, run, nil); return &evs, err },
	},
	"checkpoint": {
		value:  func() any { return &runstate.State{} },
		encode: func(v any) []byte { return appendState([]byte{FormatCheckpoint}, v.(*runstate.State)) },
		decode: func(b []byte, _ string) (any, error) { var s runstate.State; err := DecodeState(b, &s); return &s, err },
	},
	// A compressed checkpoint is not compared byte for byte: a compressor's
	// output may change from one version of its library to the next, while
	// every version reads every other's. What it holds is: see
	// TestAppendState_CompressesToTheUncompressedFormsBytes.
	"checkpoint_compressed": {
		value:  func() any { return &runstate.State{} },
		decode: func(b []byte, _ string) (any, error) { var s runstate.State; err := DecodeState(b, &s); return &s, err },
	},
	"task": {
		value:  func() any { return &Task{} },
		encode: func(v any) []byte { return AppendTask(nil, v.(*Task)) },
		decode: func(b []byte, _ string) (any, error) { var tk Task; err := DecodeTask(b, &tk); return &tk, err },
	},
	"timer": {
		value:  func() any { return &Timer{} },
		encode: func(v any) []byte { return AppendTimer(nil, v.(*Timer)) },
		decode: func(b []byte, _ string) (any, error) { var tm Timer; err := DecodeTimer(b, &tm); return &tm, err },
	},
	"outbox": {
		value:  func() any { return &OutboxRef{} },
		encode: func(v any) []byte { return AppendOutboxRef(nil, *v.(*OutboxRef)) },
		decode: func(b []byte, _ string) (any, error) { r, err := DecodeOutboxRef(b); return &r, err },
	},
	"outbox_run": {
		value:  func() any { return &OutboxRun{} },
		encode: func(v any) []byte { return AppendOutboxRun(nil, *v.(*OutboxRun)) },
		decode: func(b []byte, _ string) (any, error) { r, err := DecodeOutboxRun(b); return &r, err },
	},
	"deadline": {
		value:  func() any { return &time.Time{} },
		encode: func(v any) []byte { return AppendDeadline(nil, *v.(*time.Time)) },
		decode: func(b []byte, _ string) (any, error) { d, err := DecodeDeadline(b); return &d, err },
	},
	"ready": {
		value:  func() any { var s string; return &s },
		encode: func(v any) []byte { return AppendReady(nil, *v.(*string)) },
		decode: func(b []byte, _ string) (any, error) { s, err := DecodeReady(b); return &s, err },
	},
}

// retiredFormats are the formats a record kind was written in by an older
// weftd, which this one reads (TestGolden_EveryRecordAnOlderWeftdWroteStillLoads)
// but no longer writes: the event groups of deltas that hold every event's
// id (0x09) and their first event's run_id (0x0c), which the present one
// derives.
var retiredFormats = map[byte]bool{FormatEventDeltas: true, FormatEventDeltasIDs: true}

// firstByte answers the format byte of a golden case's stored hex.
func firstByte(stored string) byte {
	b, err := hex.DecodeString(stored[:min(2, len(stored))])
	if err != nil || len(b) == 0 {
		return 0
	}
	return b[0]
}

func TestGolden_EveryRecordKindStoresToTheBytesAnOlderWeftdWrote(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range goldenCases(t) {
		codec, ok := goldenCodecs[c.Kind]
		require.True(t, ok, "record kind %q", c.Kind)
		seen[c.Kind] = true
		v := codec.value()
		require.NoError(t, json.Unmarshal(c.Value, v), c.Name)
		if codec.encode == nil || retiredFormats[firstByte(c.Stored)] {
			continue
		}
		require.Equal(t, c.Stored, hex.EncodeToString(codec.encode(v)), "%s %s", c.Kind, c.Name)
	}
	require.Len(t, seen, len(goldenCodecs), "a golden record of every kind")
}

func TestGolden_EveryRecordAnOlderWeftdWroteStillLoads(t *testing.T) {
	for _, c := range goldenCases(t) {
		codec := goldenCodecs[c.Kind]
		stored, err := hex.DecodeString(c.Stored)
		require.NoError(t, err)
		want := codec.value()
		require.NoError(t, json.Unmarshal(c.Value, want), c.Name)
		got, err := codec.decode(stored, c.Run)
		require.NoError(t, err, "%s %s", c.Kind, c.Name)
		require.Equal(t, want, got, "%s %s", c.Kind, c.Name)
	}
}

func TestGolden_AStoredEventsBusJSONIsWhatAnOlderWeftdWrote(t *testing.T) {
	n := 0
	for _, c := range goldenCases(t) {
		if c.Kind != "event" {
			continue
		}
		n++
		stored, err := hex.DecodeString(c.Stored)
		require.NoError(t, err)
		out, env, err := AppendStoredEventJSON(nil, stored)
		require.NoError(t, err, c.Name)
		require.Equal(t, string(c.BusJSON), string(out), c.Name)
		var ev runstate.Event
		require.NoError(t, DecodeEvent(stored, &ev))
		require.Equal(t, []any{ev.Type, ev.RunID, ev.ID, ev.Seq}, []any{string(env.Type), string(env.RunID), env.ID, env.Seq}, c.Name)
	}
	require.NotZero(t, n)
}

// The envelope's reader (envelopeFields.note) knows the event's first four
// wire fields by number; they are the tags of runstate.Event.
func TestEventEnvelope_ReadsTheWireFieldsRunstateNumbers(t *testing.T) {
	ev := reflect.TypeFor[runstate.Event]()
	for name, want := range map[string]string{"Type": "1", "ID": "2,uuid=14", "RunID": "3", "Seq": "4"} {
		f, ok := ev.FieldByName(name)
		require.True(t, ok, name)
		require.Equal(t, want, f.Tag.Get("wire"), name)
	}
}
