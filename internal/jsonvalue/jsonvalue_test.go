package jsonvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// jsonNumbers are numbers at the edges of the JSON number formatting.
var jsonNumbers = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 123.456, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 5e-324,
	1e20, 1e21, 9.99e20, 1.7976931348623157e308, -2.5e-8, 1 << 53, 1<<53 + 1, 12345678901234567890, 0.1 + 0.2,
	math.NaN(), math.Inf(1), math.Inf(-1)}

// jsonStrings are strings that need every kind of escape, or none.
var jsonStrings = []string{"", "plain", `quote " and \ backslash`, "\x00\x01\x1f\b\f\n\r\t\x7f", "é ✓ 😀 \u2028 \ufffd <&>",
	"bad \xff utf-8", "\xe2\x82", strings.Repeat("k", 40)}

func randomValue(r *rand.Rand, depth int) *structpb.Value {
	switch n := r.IntN(9); {
	case n == 0:
		return structpb.NewNullValue()
	case n == 1:
		return structpb.NewBoolValue(r.IntN(2) == 0)
	case n == 2:
		return structpb.NewNumberValue(jsonNumbers[r.IntN(len(jsonNumbers))])
	case n == 3:
		return structpb.NewNumberValue(r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30)))
	case n == 4:
		return structpb.NewStringValue(jsonStrings[r.IntN(len(jsonStrings))])
	case n == 5 && r.IntN(20) == 0:
		return &structpb.Value{} // no kind
	case n == 6 && depth < 4:
		fields := map[string]*structpb.Value{}
		for range r.IntN(4) {
			fields[jsonStrings[r.IntN(len(jsonStrings))]] = randomValue(r, depth+1)
		}
		return structpb.NewStructValue(&structpb.Struct{Fields: fields})
	case n == 7 && depth < 4:
		var items []*structpb.Value
		for range r.IntN(4) {
			items = append(items, randomValue(r, depth+1))
		}
		return structpb.NewListValue(&structpb.ListValue{Values: items})
	case n == 8 && r.IntN(20) == 0:
		return &structpb.Value{Kind: &structpb.Value_StructValue{}} // a nil message
	}
	return structpb.NewStringValue("x")
}

// Append writes a Value directly: the same JSON protojson writes (without
// its insignificant whitespace), and what protojson refuses it leaves to
// protojson.
func TestAppend_WritesWhatProtojsonWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2026))
	direct, refused := 0, 0
	for range 20000 {
		v := randomValue(r, 0)
		want, werr := protojson.Marshal(v)
		got, ok := Append(nil, v)
		if !ok {
			refused++
			continue // the caller asks protojson
		}
		direct++
		require.NoError(t, werr, "%v: written directly, refused by protojson", v)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, want))
		require.Equal(t, compact.String(), string(got), "%v", v)
	}
	require.Greater(t, direct, 1000)
	require.Greater(t, refused, 100)
	for _, v := range []*structpb.Value{structpb.NewNumberValue(math.NaN()), structpb.NewStringValue("\xff"), {}} {
		_, ok := Append(nil, v)
		require.False(t, ok, "%v", v)
	}
}
