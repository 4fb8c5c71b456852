package runcodec

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/testkit/fill"
)

// The decoders of the small records: any input is decoded or refused with
// an error, never a panic, and what decodes stores back to the same value.

func FuzzDecodeTimer(f *testing.F) {
	tm := &Timer{}
	fill.Filler{Rand: rand.New(rand.NewPCG(41, 16)), Full: true}.Fill(tm)
	f.Add(AppendTimer(nil, tm))
	f.Add([]byte(`{"run_id":"r","kind":"task_timeout","due":"2026-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tm Timer
		if DecodeTimer(b, &tm) != nil || !(len(b) > 0 && b[0] == FormatTimer) {
			return
		}
		var again Timer
		require.NoError(t, DecodeTimer(AppendTimer(nil, &tm), &again))
		require.Equal(t, tm, again)
	})
}

func FuzzDecodeOutboxRef(f *testing.F) {
	f.Add(AppendOutboxRef(nil, OutboxRef{TenantID: "t", LastSeq: 9}))
	f.Add([]byte{FormatOutboxRef, 0x0a})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeOutboxRef(b)
		if err != nil {
			return
		}
		again, err := DecodeOutboxRef(AppendOutboxRef(nil, r))
		require.NoError(t, err)
		require.Equal(t, r, again)
	})
}

func FuzzDecodeOutboxRun(f *testing.F) {
	f.Add(AppendOutboxRun(nil, OutboxRun{TenantID: "t", From: 9}))
	f.Add([]byte{FormatOutboxRun, 0x0a})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeOutboxRun(b)
		if err != nil {
			return
		}
		again, err := DecodeOutboxRun(AppendOutboxRun(nil, r))
		require.NoError(t, err)
		require.Equal(t, r, again)
	})
}

func FuzzDecodeReady(f *testing.F) {
	f.Add(AppendReady(nil, "run/a/1/a1"))
	f.Add([]byte(`"run/a/1/a1"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := DecodeReady(b)
		if err != nil {
			return
		}
		again, err := DecodeReady(AppendReady(nil, id))
		require.NoError(t, err)
		require.Equal(t, id, again)
	})
}

// An event group's reader: any input is decoded or refused, never a panic,
// and a group that decodes stores back to the same events.
func FuzzDecodeEvents(f *testing.F) {
	evs := make([]runstate.Event, 3)
	for i := range evs {
		fill.Filler{Rand: rand.New(rand.NewPCG(uint64(i), 16)), Full: true}.Fill(&evs[i])
	}
	f.Add(appendEventGroupV1(nil, evs))
	f.Add(AppendEventGroup(nil, keyRun(evs[:1]), evs[:1]))
	f.Add(AppendEventGroup(nil, keyRun(benchGroup()), benchGroup())) // compressed
	f.Add([]byte{FormatEventGroup})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeEvents(b, keyRun(benchGroup()), nil)
		if err != nil || !IsEventGroup(b) || len(got) < 2 {
			return
		}
		again, err := DecodeEvents(AppendEventGroup(nil, keyRun(got), got), keyRun(got), nil)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}

func FuzzDecodeDeadline(f *testing.F) {
	f.Add(AppendDeadline(nil, time.Date(2026, 12, 2, 14, 0, 7, 250000000, time.UTC)))
	f.Add([]byte{FormatDeadline})
	f.Add([]byte{FormatDeadline, 0x0a, 0x02, 0x08})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDeadline(b)
		if err != nil {
			return
		}
		again, err := DecodeDeadline(AppendDeadline(nil, d))
		require.NoError(t, err)
		require.True(t, d.Equal(again), "%v != %v", d, again)
	})
}

// A group of deltas' reader: any input is decoded or refused, never a
// panic; the stored forms it rebuilds decode to the events it decodes, and
// the events store back, as a group of deltas, to the same events.
func FuzzDecodeEventDeltas(f *testing.F) {
	r := rand.New(rand.NewPCG(12, 16))
	for range 4 {
		b, _ := appendGroupRecord(nil, "", randomGroup(r, 2+r.IntN(3)), nil) // every run_id kept
		f.Add(b)
	}
	b, _ := appendGroupRecord(nil, keyRun(benchGroup()), benchGroup(), nil)
	f.Add(b)
	f.Add([]byte{FormatEventDeltas})
	f.Add([]byte{FormatEventDeltas, 0x12, 0x04, 0x0a, 0x02, 0x38, 0x02})
	f.Add([]byte{FormatEventDeltasIDs, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x12, 0x00})
	f.Add([]byte{FormatEventDeltasRun, 0x08, 0x01, 0x12, 0x06, 0x12, 0x00, 0x32, 0x02, 0xda, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if !isDeltas(b) {
			b = append([]byte{FormatEventDeltasRun}, b...)
		}
		run := keyRun(benchGroup())
		got, err := DecodeEvents(b, run, nil)
		var forms []runstate.Event
		formsErr := EachStoredEvent(b, run, func(e []byte) error {
			forms = append(forms, runstate.Event{})
			return DecodeEvent(e, &forms[len(forms)-1])
		})
		require.Equal(t, err == nil, formsErr == nil, "the events decode as their rebuilt stored forms do")
		if err != nil {
			return
		}
		require.Equal(t, got, forms)
		if len(got) < 2 {
			return
		}
		stored := AppendEventGroup(nil, keyRun(got), got)
		require.Equal(t, FormatEventDeltasRun, Format(stored))
		again, err := DecodeEvents(stored, keyRun(got), nil)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}
