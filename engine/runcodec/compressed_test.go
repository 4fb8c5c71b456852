package runcodec

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

// A checkpoint is stored compressed exactly when that is shorter, and a
// compressed one holds, byte for byte, the uncompressed form.
func TestAppendState_CompressesToTheUncompressedFormsBytes(t *testing.T) {
	states := []*runstate.State{benchState(), {}, {RunID: "r"}}
	rng := rand.New(rand.NewPCG(5, 34))
	for range 20 {
		states = append(states, randomState(rng, rng.IntN(2) == 0))
	}
	for _, c := range goldenCases(t) {
		if c.Kind == "checkpoint" {
			var s runstate.State
			require.NoError(t, json.Unmarshal(c.Value, &s), c.Name)
			states = append(states, &s)
		}
	}
	compressed := 0
	for i, s := range states {
		plain := appendState([]byte{FormatCheckpoint}, s)
		stored := AppendState(nil, s)
		require.True(t, IsCheckpoint(stored))
		if stored[0] == FormatCheckpoint {
			require.Equal(t, plain, stored, "state %d stored as it is", i)
			continue
		}
		compressed++
		require.Less(t, len(stored), len(plain), "state %d compressed only when shorter", i)
		require.Equal(t, FormatCheckpoint, stored[1], "state %d: the format of what it holds", i)
		inner, err := s2.Decode(nil, stored[2:])
		require.NoError(t, err, "state %d: the block is Snappy's format", i)
		require.Equal(t, plain[1:], inner, "state %d", i)
		var got runstate.State
		require.NoError(t, DecodeState(stored, &got))
		var want runstate.State
		require.NoError(t, DecodeState(plain, &want))
		require.Equal(t, want, got, "state %d", i)
	}
	require.Greater(t, compressed, len(states)/2, "most checkpoints compress")
	require.Equal(t, []byte{FormatCheckpoint}, AppendState(nil, &runstate.State{}), "an empty checkpoint is too short to compress")
}

// The checkpoint a 5-step run leaves (the bench workload's) stores in less
// than two thirds of its uncompressed length: it repeats its worker id,
// its task ids and its timestamps from step to step.
func TestAppendState_ABenchRunsCheckpointStoresInLessThanTwoThirds(t *testing.T) {
	s := benchState()
	plain := appendState([]byte{FormatCheckpoint}, s)
	stored := AppendState(nil, s)
	require.Equal(t, FormatCompressed, stored[0])
	require.Less(t, 3*len(stored), 2*len(plain), "%d stored bytes of %d", len(stored), len(plain))
}

// AppendState appends after what b holds, and leaves it alone.
func TestAppendState_AppendsAfterWhatTheBufferHolds(t *testing.T) {
	s := benchState()
	b := AppendState([]byte("head"), s)
	require.Equal(t, "head", string(b[:4]))
	require.Equal(t, AppendState(nil, s), b[4:])
}

// A compressed checkpoint that is damaged, or holds anything but a
// checkpoint's fields, is refused with an error, never a panic.
func TestDecodeState_RefusesADamagedCompressedCheckpoint(t *testing.T) {
	good := AppendState(nil, benchState())
	require.Equal(t, FormatCompressed, good[0])
	wrap := func(inner []byte) []byte {
		if len(inner) == 0 {
			return []byte{FormatCompressed}
		}
		return append([]byte{FormatCompressed, inner[0]}, s2.EncodeSnappy(nil, inner[1:])...)
	}
	hugeLen, _ := hex.DecodeString("80808080") // a length varint of 2^28 and nothing after it
	cases := map[string][]byte{
		"only the format byte":    {FormatCompressed},
		"truncated":               good[:len(good)/2],
		"a corrupt block":         append([]byte{FormatCompressed, FormatCheckpoint}, 0x10, 0xff, 0xff, 0xff),
		"a length past the limit": append([]byte{FormatCompressed, FormatCheckpoint}, append(hugeLen, 0x01)...),
		"compressed twice":        wrap(good),
		"an event inside":         wrap(AppendEvent(nil, benchEvent())),
		"nothing inside":          wrap(nil),
		"JSON inside":             wrap([]byte(`{"version":1}`)),
		"an event group inside":   wrap(AppendEventGroup(nil, benchEvent().RunID, []runstate.Event{*benchEvent(), *benchEvent()})),
		"damaged fields inside":   wrap([]byte{FormatCheckpoint, 0x0a, 0x05, 'x'}),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			var s runstate.State
			require.Error(t, DecodeState(b, &s))
		})
	}
}

// An event group is stored compressed when that is shorter, and reads,
// event by event and as each event's own stored form, exactly as the group
// it holds.
func TestAppendEventGroup_ACompressedGroupReadsAsTheGroupItHolds(t *testing.T) {
	evs := benchGroup()
	plain, _ := appendGroupRecord(nil, keyRun(evs), evs, nil)
	stored := AppendEventGroup(nil, keyRun(evs), evs)
	require.Equal(t, []byte{FormatCompressed, FormatEventDeltasRun}, stored[:2])
	require.Less(t, len(stored), len(plain))
	require.True(t, IsEventGroup(stored))
	require.False(t, IsCheckpoint(stored))
	inner, err := s2.Decode(nil, stored[2:])
	require.NoError(t, err)
	require.Equal(t, plain[1:], inner)
	var want, got [][]byte
	require.NoError(t, EachStoredEvent(plain, keyRun(evs), func(e []byte) error { want = append(want, e); return nil }))
	require.NoError(t, EachStoredEvent(stored, keyRun(evs), func(e []byte) error { got = append(got, e); return nil }))
	require.Equal(t, want, got)
	decoded, err := DecodeEvents(stored, keyRun(evs), nil)
	require.NoError(t, err)
	require.Equal(t, evs, decoded)

	var s runstate.State
	require.Error(t, DecodeState(stored, &s), "a compressed group is no checkpoint")
	_, err = DecodeEvents(AppendState(nil, benchState()), benchState().RunID, nil)
	require.Error(t, err, "a compressed checkpoint is no event group")
}
