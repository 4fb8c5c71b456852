package jsonvalue

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// requireParsesAsProtojson checks Parse against protojson.Unmarshal on
// text: what Parse answers, protojson answers too, equal; and what protojson
// refuses, Parse refuses. It reports whether Parse answered.
func requireParsesAsProtojson(t testing.TB, text []byte) bool {
	t.Helper()
	got, ok := Parse(text)
	want := &structpb.Value{}
	err := protojson.Unmarshal(text, want)
	if !ok {
		return false
	}
	require.NoError(t, err, "parsed directly, refused by protojson: %q", text)
	require.True(t, proto.Equal(want, got), "%q: protojson %v, Parse %v", text, want, got)
	return true
}

// Parse reads what protojson reads, as protojson reads it, over random
// values written compact (as the engine stores them) and with protojson's
// own whitespace.
func TestParse_ReadsWhatProtojsonReads(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2026))
	direct := 0
	for range 20000 {
		v := randomValue(r, 0)
		text, err := protojson.Marshal(v)
		if err != nil {
			continue
		}
		if requireParsesAsProtojson(t, text) {
			direct++
		}
		spaced, err := protojson.MarshalOptions{Multiline: true}.Marshal(v)
		require.NoError(t, err)
		requireParsesAsProtojson(t, spaced)
	}
	require.Greater(t, direct, 15000, "most values are read directly")
}

// Text protojson refuses, or that Parse leaves to protojson, Parse refuses.
func TestParse_RefusesWhatItDoesNotReadAsProtojsonDoes(t *testing.T) {
	refused := []string{
		"", " ", "nul", "nulls", "tru", "01", "-", "1.", ".5", "+1", "1e", "1e+", "0x1", "1e400", "-1e400",
		`"`, `"a`, "\"\x01\"", `"\x"`, `"\u12"`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"",
		"{", "{}}", `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":1,"a":2}`, "[", "[1,]", "[1 2]",
		"1 2", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	}
	for _, text := range refused {
		_, ok := Parse([]byte(text))
		require.False(t, ok, "%q", text)
	}
}

// The common forms are read directly, not left to protojson: a Parse that
// refused everything would pass the tests above.
func TestParse_ReadsTheCommonFormsDirectly(t *testing.T) {
	for _, text := range []string{
		`null`, `true`, `false`, `0`, `-0`, `12`, `-1.5e-7`, `1E+3`, `""`, `"plain é ✓"`,
		`"esc \" \\ \/ \b \f \n \r \t \u00e9 \u2028"`, `{}`, `[]`,
		`{"a":1,"b":[true,null,{"c":"d"}],"e":{}}`, " \t\r\n{ \"a\" : [ 1 , 2 ] } \n",
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	} {
		require.True(t, requireParsesAsProtojson(t, []byte(text)), "%q read directly", text)
	}
}

func FuzzParse_ReadsWhatProtojsonReads(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",null,true]}`, `"\u00e9"`, `-0.5e10`, `[{}]`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		requireParsesAsProtojson(t, text)
	})
}

func BenchmarkParse(b *testing.B) {
	text := []byte(`{"order":"A-1042","lines":[{"sku":"x","qty":2}],"total":12.5,"paid":true}`)
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Parse(text); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := protojson.Unmarshal(text, &structpb.Value{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
