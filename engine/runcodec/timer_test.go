package runcodec

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit/fill"
)

func TestTimerCodec_RoundTripsEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 16))
	for i := range 2000 {
		tm := &Timer{}
		fill.Filler{Rand: r, Full: i%3 == 0}.Fill(tm)
		if i%2 == 0 { // as the engine writes a task's timer
			tm.RunID = "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e"
			tm.Ref = tm.RunID + "/charge/1/a1"
			tm.Token = tm.Ref + "#5f0c6a1b2d3e4f5061728394a5b6c7d8"
		}
		var got Timer
		require.NoError(t, DecodeTimer(AppendTimer(nil, tm), &got))
		require.Equal(t, *tm, got)
	}
}

func TestTimerCodec_IdsStoredAsSuffixesComeBackWhole(t *testing.T) {
	for _, tm := range []Timer{
		{RunID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", Kind: "attempt", Ref: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1",
			Token: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1#ff"},
		{RunID: "run", Ref: "run/", Token: "run/#"},        // empty suffixes are stored whole
		{RunID: "", Ref: "/x", Token: "/x#y"},              // an empty run id is still a prefix
		{RunID: "r", Ref: "other/x", Token: "other#y"},     // no prefix: stored whole
		{RunID: "r", Kind: "backoff", Ref: "a", Token: ""}, // an action's ref
		{RunID: "r", Kind: "workflow"},
	} {
		var got Timer
		require.NoError(t, DecodeTimer(AppendTimer(nil, &tm), &got))
		require.Equal(t, tm, got)
	}
}

func TestTimerCodec_OldJSONRecordsStillDecode(t *testing.T) {
	// A timer as an older weftd wrote it, byte for byte.
	old := `{"run_id":"r1","kind":"attempt","ref":"r1/a/1/a1","due":"2026-01-02T03:04:05.123456789Z","token":"r1/a/1/a1#abc"}`
	var got Timer
	require.NoError(t, DecodeTimer([]byte(old), &got))
	require.Equal(t, Timer{RunID: "r1", Kind: "attempt", Ref: "r1/a/1/a1",
		Due: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), Token: "r1/a/1/a1#abc"}, got)
	require.ErrorIs(t, DecodeTimer([]byte{0x7f}, &got), ErrUnknownFormat)
}

func TestReadyCodec_NamesItsTaskAndOldJSONStillDecodes(t *testing.T) {
	for _, id := range []string{"0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1", `with "quotes"`, ""} {
		got, err := DecodeReady(AppendReady(nil, id))
		require.NoError(t, err)
		require.Equal(t, id, got)
		old, err := json.Marshal(id)
		require.NoError(t, err)
		got, err = DecodeReady(old)
		require.NoError(t, err)
		require.Equal(t, id, got)
	}
	_, err := DecodeReady([]byte{0x7f})
	require.ErrorIs(t, err, ErrUnknownFormat)
}
