package runcodec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/runstate"
)

// stepFields answers the field numbers of the first step of a stored,
// uncompressed checkpoint.
func stepFields(t *testing.T, stored []byte) []protowire.Number {
	t.Helper()
	var out []protowire.Number
	require.NoError(t, eachField(stored[1:], func(n protowire.Number, f field) error {
		if n != 6 || out != nil {
			return nil
		}
		step, err := f.bytes()
		require.NoError(t, err)
		out = []protowire.Number{}
		return eachField(step, func(n protowire.Number, _ field) error { out = append(out, n); return nil })
	}))
	return out
}

// A step's claim tokens, {prefix}#{32 lowercase hex digits} as the engine
// makes them, are stored as the prefix and the digits' 16 bytes (step
// fields 46 and 47); any other text is stored as it is (39 and 44); both
// read back byte for byte.
func TestCheckpoint_AClaimTokenIsStoredAsItsPrefixAndItsSixteenRandomBytes(t *testing.T) {
	const hex32 = "a25bce68ba65b5437a71f01f8356b178"
	for _, tc := range []struct {
		token   string
		compact bool
	}{
		{"s1/1/activity1#" + hex32, true},
		{"#" + hex32, true},
		{"a#b/1/x#" + hex32, true},
		{"s1/1/activity1#" + hex32[:31], false},
		{"s1/1/activity1#" + hex32 + "0", false},
		{"s1/1/activity1#A25BCE68BA65B5437A71F01F8356B178", false},
		{"s1/1/activity1:" + hex32, false},
		{"s1/1/activity1#" + hex32[:31] + "g", false},
		{hex32, false},
		{"plain", false},
	} {
		s := &runstate.State{RunID: "r", Steps: []*runstate.StepState{{ActionID: "s1", ClaimToken: tc.token, EndedClaimToken: tc.token}}}
		plain := appendState([]byte{FormatCheckpoint}, s)
		if tc.compact {
			require.Equal(t, []protowire.Number{1, 46, 47}, stepFields(t, plain), tc.token)
			require.Less(t, len(plain), len(appendState([]byte{FormatCheckpoint}, &runstate.State{RunID: "r",
				Steps: []*runstate.StepState{{ActionID: "s1", ClaimToken: tc.token[:len(tc.token)-1] + "x", EndedClaimToken: tc.token[:len(tc.token)-1] + "x"}}})),
				"%s: shorter than as text", tc.token)
		} else {
			require.Equal(t, []protowire.Number{1, 39, 44}, stepFields(t, plain), tc.token)
		}
		var got runstate.State
		require.NoError(t, DecodeState(AppendState(nil, s), &got))
		require.Equal(t, tc.token, got.Steps[0].ClaimToken)
		require.Equal(t, tc.token, got.Steps[0].EndedClaimToken)
	}
}

// A compact claim token too short to hold its 16 random bytes is refused.
func TestCheckpoint_ACompactClaimTokenShorterThanItsRandomBytesIsRefused(t *testing.T) {
	step := appendBytes(nil, 46, make([]byte, 15))
	b := append([]byte{FormatCheckpoint}, appendBytes(nil, 6, step)...)
	var s runstate.State
	require.ErrorContains(t, DecodeState(b, &s), "16 random bytes")
}

// A step's eager tokens are each stored in the form that fits it (step
// field 48 for a claim token's compact form, 37 as text), and read back in
// their order.
func TestCheckpoint_EagerTokensKeepTheirOrderWhateverFormEachIsStoredIn(t *testing.T) {
	const hex32 = "0fa2804f5846e79de8fb763d18241d8e"
	tokens := []string{"s5/1/activity1#" + hex32, "odd-token", "s6/1/activity1#" + hex32[:31] + "f", "", "s7/2/a#" + hex32}
	s := &runstate.State{RunID: "r", Steps: []*runstate.StepState{{ActionID: "s4", EagerTokens: tokens}}}
	require.Equal(t, []protowire.Number{1, 48, 37, 48, 37, 48}, stepFields(t, appendState([]byte{FormatCheckpoint}, s)))
	var got runstate.State
	require.NoError(t, DecodeState(AppendState(nil, s), &got))
	require.Equal(t, tokens, got.Steps[0].EagerTokens)
}
