package runcodec

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

// randomGroup answers n events with consecutive run_seqs, each sharing a
// random part of its fields and of its data's with the event before it,
// with keys derived, empty or other, known and unknown types, times near
// emitted_at and data strings under the run id among them.
func randomGroup(r *rand.Rand, n int) []runstate.Event {
	types := runstate.EventTypes()
	evs := make([]runstate.Event, n)
	first := r.Uint64()
	for i := range evs {
		ev := randomEvent(r, r.IntN(4) == 0)
		if i > 0 {
			mix(r, reflect.ValueOf(ev).Elem(), reflect.ValueOf(&evs[i-1]).Elem())
			mix(r, reflect.ValueOf(&ev.Data).Elem(), reflect.ValueOf(&evs[i-1].Data).Elem())
		}
		if r.IntN(3) > 0 {
			ev.Type = types[r.IntN(len(types))]
		}
		if r.IntN(2) == 0 && !ev.EmittedAt.IsZero() {
			ev.Data.CompletedAt = ev.EmittedAt.Add(time.Duration(r.IntN(3)) * time.Millisecond)
			ev.OccurredAt = ev.EmittedAt.Add(-time.Duration(r.Int64N(1 << 40)))
		}
		if r.IntN(2) == 0 {
			ev.Data.TaskID = ev.RunID + "/" + ev.StepID + "/1/activity1"
		}
		ev.Seq = first + uint64(i)
		switch r.IntN(4) {
		case 0, 1:
			ev.IdempotencyKey = runstate.IdempotencyKey(ev.RunID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt)
		case 2:
			ev.IdempotencyKey = ""
		}
		evs[i] = *ev
	}
	return evs
}

// mix sets about half of v's fields to prev's.
func mix(r *rand.Rand, v, prev reflect.Value) {
	for i := range v.NumField() {
		if r.IntN(2) == 0 && v.Type().Field(i).Name != "Data" {
			v.Field(i).Set(prev.Field(i))
		}
	}
}

// keyRun is the run whose key holds a group of events: its last event's,
// as runlog.AppendEvents keys it.
func keyRun(evs []runstate.Event) string { return evs[len(evs)-1].RunID }

// benchGroup is the events of a step's completion in the benchmark workload:
// the attempt, the step's end, the next step's schedule and its eager start.
func benchGroup() []runstate.Event {
	at := time.Date(2026, 12, 2, 17, 29, 44, 893000000, time.UTC)
	run := "run-01a237ce-1eb9-75e5-93e2-5cd95bac6fe8"
	ev := func(seq uint64, typ, step string, engine int, data runstate.EventData) runstate.Event {
		return runstate.Event{Type: typ, ID: "c4796373-c569-4df6-a98f-3bd6d0f0b1e" + string(rune('0'+seq%10)), RunID: run, Seq: seq,
			IdempotencyKey: runstate.IdempotencyKey(run, step, 1, typ, "1", engine), EmittedAt: at,
			EmittedBy: "activity-worker:bench-worker-0", StepID: step, LogicalAttempt: 1, EngineAttempt: engine, PlanVersion: "1", Data: data}
	}
	return []runstate.Event{
		ev(6, runstate.EvStepAttemptRecorded, "s1", 1, runstate.EventData{Attempt: &runstate.Attempt{LogicalAttempt: 1, EngineAttempt: 1,
			Outcome: runstate.AttemptSucceeded, StartedAt: at, CompletedAt: at, WorkerID: "bench-worker-0"},
			CorrelationID: "b3e34985-0720-4237-976f-eefd2c0b55bd"}),
		ev(7, runstate.EvStepCompleted, "s1", 0, runstate.EventData{Status: "SUCCEEDED", CompletedAt: at, Output: json.RawMessage(`{}`)}),
		ev(8, runstate.EvStepScheduled, "s2", 0, runstate.EventData{Status: "SCHEDULED", TaskID: run + "/s2/1/activity1", Queue: "default", NotBefore: at}),
		ev(9, runstate.EvStepStarted, "s2", 0, runstate.EventData{Status: "RUNNING", WorkerID: "bench-worker-0", StartedAt: at}),
	}
}

func TestEventDeltas_GiveBackEachEventsOwnStoredFormByteForByte(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 16))
	groups := [][]runstate.Event{benchGroup()}
	for range 3000 {
		groups = append(groups, randomGroup(r, 2+r.IntN(5)))
	}
	for g, evs := range groups {
		b := AppendEventGroup(nil, keyRun(evs), evs)
		require.Equal(t, FormatEventDeltasRun, Format(b), "group %d", g)
		var forms [][]byte
		require.NoError(t, EachStoredEvent(b, keyRun(evs), func(e []byte) error { forms = append(forms, e); return nil }))
		require.Len(t, forms, len(evs))
		for i := range evs {
			require.Equal(t, hex.EncodeToString(AppendEvent(nil, &evs[i])), hex.EncodeToString(forms[i]), "group %d, event %d", g, i)
		}
		got, err := DecodeEvents(b, keyRun(evs), nil)
		require.NoError(t, err)
		require.Equal(t, evs, got, "group %d", g)
	}
}

// The forms AppendEventGroupForms keeps while it encodes are, byte for
// byte, those EachStoredEvent answers of the record it wrote — for a group
// of deltas, for one it writes in the older group form (run_seqs not
// consecutive) and for one event alone — and the record is
// AppendEventGroup's; the forms of several groups follow one another.
func TestAppendEventGroupForms_AreTheFormsEachStoredEventAnswersOfTheRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 16))
	groups := [][]runstate.Event{benchGroup(), benchGroup()[:1]}
	for range 500 {
		evs := randomGroup(r, 1+r.IntN(5))
		if len(evs) > 1 && r.IntN(4) == 0 {
			evs[len(evs)-1].Seq += 2 // not consecutive: the older group form
		}
		groups = append(groups, evs)
	}
	var forms EventForms
	var want [][]byte
	for g, evs := range groups {
		b := AppendEventGroupForms(nil, keyRun(evs), evs, &forms)
		require.Equal(t, hex.EncodeToString(AppendEventGroup(nil, keyRun(evs), evs)), hex.EncodeToString(b), "group %d", g)
		require.NoError(t, EachStoredEvent(b, keyRun(evs), func(e []byte) error { want = append(want, e); return nil }))
	}
	var got [][]byte
	forms.Each(func(f []byte) { got = append(got, f) })
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, hex.EncodeToString(want[i]), hex.EncodeToString(got[i]), "event %d", i)
	}
}

// The JSON the API, the export and the bus see of an event is the same
// whether it was stored alone (0x01), in a group of an older weftd (0x07)
// or in a group of deltas (0x09).
func TestEventDeltas_AnEventsJSONIsTheSameStoredAloneInAV1GroupOrAsDeltas(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 16))
	for range 500 {
		evs := randomGroup(r, 2+r.IntN(4))
		var v1, v2 [][]byte
		require.NoError(t, EachStoredEvent(appendEventGroupV1(nil, evs), "", func(e []byte) error { v1 = append(v1, e); return nil }))
		require.NoError(t, EachStoredEvent(AppendEventGroup(nil, keyRun(evs), evs), keyRun(evs), func(e []byte) error { v2 = append(v2, e); return nil }))
		for i := range evs {
			want, err := json.Marshal(&evs[i])
			require.NoError(t, err)
			for name, stored := range map[string][]byte{"alone": AppendEvent(nil, &evs[i]), "v1 group": v1[i], "deltas": v2[i]} {
				got, env, err := AppendStoredEventJSON(nil, stored)
				require.NoError(t, err, name)
				require.Equal(t, string(want), string(got), name)
				require.Equal(t, []any{evs[i].Type, evs[i].RunID, evs[i].ID, evs[i].Seq},
					[]any{string(env.Type), string(env.RunID), env.ID, env.Seq}, name)
			}
		}
	}
}

// A group an older weftd stored (0x07), its events' run_seqs consecutive as
// a decision's are, reads as the same events a group of deltas does.
func TestEventGroupV1_AGroupAnOlderWeftdStoredReadsAsTheSameEvents(t *testing.T) {
	evs := benchGroup()
	old := appendEventGroupV1(nil, evs)
	require.Equal(t, FormatEventGroup, old[0])
	got, err := DecodeEvents(old, "", nil) // a 0x07 group holds every run_id
	require.NoError(t, err)
	require.Equal(t, evs, got)
	again, err := DecodeEvents(AppendEventGroup(nil, keyRun(got), got), keyRun(got), nil)
	require.NoError(t, err)
	require.Equal(t, got, again)
}

// What a decision's events share — the run, the plan version, who emitted
// them and when, the step — is stored once; their run_seqs, keys and types
// take no bytes or one, and their times and task ids a few: the benchmark's
// group of four takes less than half of what it took as a 0x07 group.
func TestEventDeltas_StoreWhatADecisionsEventsShareOnce(t *testing.T) {
	evs := benchGroup()
	v1, v2 := appendEventGroupV1(nil, evs), AppendEventGroup(nil, keyRun(evs), evs)
	t.Logf("the benchmark's step group: 0x07 %d bytes, 0x09 %d bytes", len(v1), len(v2))
	require.Less(t, len(v2), len(v1)/2)
	require.Less(t, len(v2), 400)
}

// A key that is not the one the event's fields derive is stored, and read
// back, as it is: the empty key, another key, a key of the wrong shape.
func TestEventDeltas_AKeyTheFieldsDoNotDeriveIsStored(t *testing.T) {
	for _, key := range []string{"", "k", runstate.IdempotencyKey("other", "s1", 1, runstate.EvStepCompleted, "1", 0)} {
		evs := benchGroup()
		evs[1].IdempotencyKey = key
		got, err := DecodeEvents(AppendEventGroup(nil, keyRun(evs), evs), keyRun(evs), nil)
		require.NoError(t, err)
		require.Equal(t, evs, got, "key %q", key)
	}
}

func TestDerivedKey_IsTheEventIdempotencyKey(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 16))
	types := append(runstate.EventTypes(), "Other")
	for range 2000 {
		ev := randomEvent(r, false)
		ev.Type = types[r.IntN(len(types))]
		want := runstate.IdempotencyKey(ev.RunID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt)
		sum := derivedKey(ev.RunID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt)
		require.Equal(t, want, hex.EncodeToString(sum[:]))
	}
}

// Every event type has a KeySpan bit, so that a group names it in a byte.
func TestEventDeltas_EveryEventTypeIsStoredByItsBit(t *testing.T) {
	for _, typ := range runstate.EventTypes() {
		bit, ok := runstate.EventTypeBit(typ)
		require.True(t, ok, typ)
		require.Equal(t, typ, eventTypeOfBit[bit])
	}
}

// A group of deltas that is empty, truncated, or names what it cannot
// rebuild is refused, never half read as events.
func TestEventDeltas_AMalformedGroupIsRefused(t *testing.T) {
	good := AppendEventGroup(nil, keyRun(benchGroup()), benchGroup())
	for name, b := range map[string][]byte{
		"empty":                          {FormatEventDeltas},
		"only a run_seq":                 {FormatEventDeltas, 0x08, 0x01},
		"truncated":                      good[:len(good)-3],
		"an unknown type code":           {FormatEventDeltas, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x7f},
		"a type code of 0":               {FormatEventDeltas, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x00},
		"a time without emitted_at":      {FormatEventDeltas, 0x12, 0x04, 0x0a, 0x02, 0x38, 0x02},
		"an event that is a varint":      {FormatEventDeltas, 0x10, 0x01},
		"a run_seq that is not varint":   {FormatEventDeltas, 0x0a, 0x00, 0x12, 0x00},
		"cleared fields not packed":      {FormatEventDeltas, 0x12, 0x02, 0x18, 0x01},
		"a data time without emitted_at": {FormatEventDeltas, 0x12, 0x04, 0x12, 0x02, 0x50, 0x02},
	} {
		_, err := DecodeEvents(b, keyRun(benchGroup()), nil)
		require.Error(t, err, name)
		require.Error(t, EachStoredEvent(b, keyRun(benchGroup()), func([]byte) error { return nil }), name)
	}
}

// A group's coder holds every field of an event and of its data: else
// every group would be stored in the older, larger form.
func TestEventDeltas_HoldEveryFieldOfAnEventAndItsData(t *testing.T) {
	require.True(t, eventSpansFit, "Event has %d fields (room for %d), EventData %d (room for %d)",
		len(eventJSON.fields), maxEventFields, len(eventDataJSON.fields), maxEventDataFields)
}

// Groups of deltas changed at random — bytes replaced, inserted, dropped
// or repeated — are read or refused, never a panic; what is read reads the
// same from the rebuilt stored forms, and stores back to the same events
// (the fuzz target's property, over many inputs in every run).
func TestEventDeltas_AChangedGroupIsReadOrRefusedAndWhatIsReadStoresBack(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seeds, runs := [][]byte{AppendEventGroup(nil, keyRun(benchGroup()), benchGroup())}, []string{keyRun(benchGroup())}
	for range 4 {
		g := randomGroup(r, 2+r.IntN(3))
		seeds, runs = append(seeds, AppendEventGroup(nil, keyRun(g), g)), append(runs, keyRun(g))
	}
	for range 20000 {
		seed := r.IntN(len(seeds))
		b, run := append([]byte(nil), seeds[seed]...), runs[seed]
		for range 1 + r.IntN(3) {
			switch r.IntN(4) {
			case 0:
				b[1+r.IntN(len(b)-1)] = byte(r.Uint32())
			case 1:
				at := 1 + r.IntN(len(b)-1)
				b = append(b[:at], append([]byte{byte(r.Uint32()), byte(r.Uint32())}, b[at:]...)...)
			case 2:
				at := 1 + r.IntN(len(b)-1)
				n := r.IntN(8)
				if at+n < len(b) {
					b = append(b[:at], b[at+n:]...)
				}
			case 3:
				at := 1 + r.IntN(len(b)-1)
				n := min(r.IntN(16), len(b)-at)
				b = append(b[:at], append(append([]byte(nil), b[at:at+n]...), b[at:]...)...)
			}
		}
		got, err := DecodeEvents(b, run, nil)
		var forms []runstate.Event
		formsErr := EachStoredEvent(b, run, func(e []byte) error {
			forms = append(forms, runstate.Event{})
			return DecodeEvent(e, &forms[len(forms)-1])
		})
		if (err == nil) != (formsErr == nil) {
			t.Fatalf("errs differ %v %v: %s", err, formsErr, hex.EncodeToString(b))
		}
		if err != nil || len(got) < 2 {
			continue
		}
		if !reflect.DeepEqual(got, forms) {
			t.Fatalf("forms differ: %s", hex.EncodeToString(b))
		}
		again, err := DecodeEvents(AppendEventGroup(nil, keyRun(got), got), keyRun(got), nil)
		if err != nil || !reflect.DeepEqual(got, again) {
			for j := range got {
				if !reflect.DeepEqual(got[j], again[j]) {
					t.Logf("event %d:\n%+v\n%+v", j, got[j], again[j])
				}
			}
			t.Fatalf("round trip %v: %s", err, hex.EncodeToString(b))
		}
	}
}

// The event id a group derives is runstate.EventID's: a version 8 UUID,
// one per run and run_seq.
func TestEventID_IsTheIDAGroupDerives(t *testing.T) {
	seen := map[string]bool{}
	for _, run := range []string{"run-01a237ce-1eb9-75e5-93e2-5cd95bac6fe8", "r", ""} {
		for _, seq := range []uint64{0, 1, 2, 9, 10, 1 << 40, 1<<64 - 1} {
			id := runstate.EventID(run, seq)
			b := derivedEventID(run, seq)
			require.Equal(t, id, string(appendUUID(nil, b[:])), "%s %d", run, seq)
			u, ok := uuidBytes(id)
			require.True(t, ok, "canonical: %s", id)
			require.Equal(t, byte(0x80), u[6]&0xf0, "version 8: %s", id)
			require.Equal(t, byte(0x80), u[8]&0xc0, "RFC 9562's variant: %s", id)
			require.False(t, seen[id], "one id per run and run_seq")
			seen[id] = true
		}
	}
}

// A group whose events have the ids their run and run_seq derive stores
// none of them; an event with another id, or none, keeps its own; every
// event reads back byte for byte as stored alone.
func TestEventDeltas_AGroupStoresOnlyTheEventIDsItCannotDerive(t *testing.T) {
	random := benchGroup()
	derived := benchGroup()
	for i := range derived {
		derived[i].ID = runstate.EventID(derived[i].RunID, derived[i].Seq)
	}
	plainRandom, _ := appendGroupRecord(nil, keyRun(random), random, nil)
	plainDerived, _ := appendGroupRecord(nil, keyRun(derived), derived, nil)
	require.InDelta(t, len(plainRandom)-len(derived)*18, len(plainDerived), 1,
		"each derived id leaves out its 18 bytes (an event's length may then take a byte less)")

	mixed := benchGroup()
	mixed[0].ID = runstate.EventID(mixed[0].RunID, mixed[0].Seq)
	mixed[2].ID = ""
	mixed[3].ID = "not-a-uuid"
	for _, evs := range [][]runstate.Event{random, derived, mixed} {
		b, _ := appendGroupRecord(nil, keyRun(evs), evs, nil)
		require.Equal(t, FormatEventDeltasRun, b[0])
		var forms [][]byte
		require.NoError(t, EachStoredEvent(b, keyRun(evs), func(e []byte) error { forms = append(forms, e); return nil }))
		require.Len(t, forms, len(evs))
		for i := range evs {
			require.Equal(t, hex.EncodeToString(AppendEvent(nil, &evs[i])), hex.EncodeToString(forms[i]), "event %d", i)
		}
		got, err := DecodeEvents(b, keyRun(evs), nil)
		require.NoError(t, err)
		require.Equal(t, evs, got)
	}
}

// A group of deltas is stored under its run's key, so its first event's
// run_id is left out when it is that run, and read back from the run its
// reader names; a reader that names none is refused. A first event of
// another run, or of none, keeps its run_id.
func TestEventDeltasRun_TheFirstEventsRunIDIsTheRunOfTheKey(t *testing.T) {
	evs := benchGroup()
	run := keyRun(evs)
	b, _ := appendGroupRecord(nil, run, evs, nil)
	require.Equal(t, FormatEventDeltasRun, b[0])
	require.NotContains(t, string(b), run, "the run_id is not stored (nor the task id's run prefix)")
	kept, _ := appendGroupRecord(nil, "", evs, nil)
	require.Equal(t, len(kept)-2-len(run), len(b), "the run_id's field is left out")
	got, err := DecodeEvents(b, run, nil)
	require.NoError(t, err)
	require.Equal(t, evs, got)
	_, err = DecodeEvents(b, "", nil)
	require.ErrorContains(t, err, "the run_id of the run whose key holds the group")

	for _, first := range []string{"run-other", ""} {
		evs := benchGroup()
		evs[0].RunID = first
		b, _ := appendGroupRecord(nil, run, evs, nil)
		for _, reader := range []string{run, ""} {
			got, err := DecodeEvents(b, reader, nil)
			require.NoError(t, err, "first event's run %q, reader's %q", first, reader)
			require.Equal(t, evs, got, "first event's run %q, reader's %q", first, reader)
		}
	}
}

// A string of an event's data that is a UUID in its canonical text (a
// correlation id) is stored as its 16 bytes and rebuilt byte for byte; one
// in any other text is stored as it is.
func TestEventDeltasRun_ACanonicalUUIDInDataIsStoredAsItsSixteenBytes(t *testing.T) {
	const id = "b3e34985-0720-4237-976f-eefd2c0b55bd"
	size := map[string]int{}
	for _, text := range []string{id, strings.ToUpper(id), strings.ReplaceAll(id, "-", "0"), "b3e34985-0720-4237-976f-eefd2c0b55bg", "b3e34985-0720-4237-976f-eefd2c0b55b", "x"} {
		evs := benchGroup()
		evs[0].Data.CorrelationID = text
		evs[2].Data.Queue = text
		b, _ := appendGroupRecord(nil, keyRun(evs), evs, nil)
		size[text] = len(b)
		if text == id {
			require.NotContains(t, string(b), id)
		} else {
			require.Contains(t, string(b), text)
		}
		var forms [][]byte
		require.NoError(t, EachStoredEvent(b, keyRun(evs), func(e []byte) error { forms = append(forms, e); return nil }))
		for i := range evs {
			require.Equal(t, hex.EncodeToString(AppendEvent(nil, &evs[i])), hex.EncodeToString(forms[i]), "%q: event %d", text, i)
		}
		got, err := DecodeEvents(b, keyRun(evs), nil)
		require.NoError(t, err)
		require.Equal(t, evs, got, text)
	}
	require.Equal(t, size[strings.ToUpper(id)]-2*(20-2), size[id], "each UUID takes 16 bytes, not 36, and its event's field 6 two")
}
