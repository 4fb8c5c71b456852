package expr

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// jv is a typed JSON value the property tests generate.
type jv struct {
	kind  string // null bool int uint double string list object
	b     bool
	i     int64
	u     uint64
	f     float64
	s     string
	elems []jv
	keys  []string
}

// genJSON draws a typed JSON value at most depth deep.
func genJSON(depth int) *rapid.Generator[jv] {
	return rapid.Custom(func(t *rapid.T) jv {
		kinds := []string{"null", "bool", "int", "uint", "double", "string"}
		if depth > 0 {
			kinds = append(kinds, "list", "object")
		}
		v := jv{kind: rapid.SampledFrom(kinds).Draw(t, "kind")}
		switch v.kind {
		case "bool":
			v.b = rapid.Bool().Draw(t, "b")
		case "int":
			v.i = rapid.OneOf(rapid.Int64(), rapid.Int64Range(-1<<53-5, -1<<53+5), rapid.Int64Range(1<<53-5, 1<<53+5),
				rapid.SampledFrom([]int64{math.MaxInt64, math.MinInt64, 0})).Draw(t, "i")
		case "uint":
			v.u = rapid.Uint64Range(math.MaxInt64+1, math.MaxUint64).Draw(t, "u")
		case "double":
			v.f = rapid.OneOf(rapid.Float64(), rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1, 2, -3, 1e21, 1e-7, 5e-324, math.MaxFloat64})).
				Filter(func(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }).Draw(t, "f")
		case "string":
			v.s = rapid.String().Draw(t, "s")
		case "list":
			v.elems = rapid.SliceOfN(genJSON(depth-1), 0, 4).Draw(t, "elems")
		case "object":
			v.keys = rapid.SliceOfNDistinct(rapid.String(), 0, 4, rapid.ID[string]).Draw(t, "keys")
			v.elems = rapid.SliceOfN(genJSON(depth-1), len(v.keys), len(v.keys)).Draw(t, "members")
		}
		return v
	})
}

// encode writes v as JSON text with doubles in exponent form (not the form
// ToJSON writes), so reading both forms is exercised.
func (v jv) encode(b *strings.Builder) {
	switch v.kind {
	case "null":
		b.WriteString("null")
	case "bool":
		b.WriteString(strconv.FormatBool(v.b))
	case "int":
		b.WriteString(strconv.FormatInt(v.i, 10))
	case "uint":
		b.WriteString(strconv.FormatUint(v.u, 10))
	case "double":
		b.WriteString(strconv.FormatFloat(v.f, 'e', -1, 64))
	case "string":
		q, _ := json.Marshal(v.s)
		b.Write(q)
	case "list":
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b)
		}
		b.WriteByte(']')
	case "object":
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			v.elems[i].encode(b)
		}
		b.WriteByte('}')
	}
}

// sameAs checks that JSON text (read with its numbers' text) is v: the same
// kinds, ints as integers, doubles as non-integers of the same bits.
func (v jv) sameAs(t *rapid.T, got any) {
	switch v.kind {
	case "null":
		if got != nil {
			t.Fatalf("null became %v", got)
		}
	case "bool":
		if got != v.b {
			t.Fatalf("%v became %v", v.b, got)
		}
	case "int", "uint":
		n, ok := got.(json.Number)
		want := strconv.FormatInt(v.i, 10)
		if v.kind == "uint" {
			want = strconv.FormatUint(v.u, 10)
		}
		if !ok || string(n) != want {
			t.Fatalf("%s %s became %v", v.kind, want, got)
		}
	case "double":
		n, ok := got.(json.Number)
		if !ok || !strings.ContainsAny(string(n), ".e") {
			t.Fatalf("double %v became %v, which reads as an int", v.f, got)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.Float64bits(f) != math.Float64bits(v.f) {
			t.Fatalf("double %v became %v", v.f, n)
		}
	case "string":
		if got != v.s {
			t.Fatalf("string %q became %v", v.s, got)
		}
	case "list":
		l, ok := got.([]any)
		if !ok || len(l) != len(v.elems) {
			t.Fatalf("list of %d became %v", len(v.elems), got)
		}
		for i, e := range v.elems {
			e.sameAs(t, l[i])
		}
	case "object":
		m, ok := got.(map[string]any)
		if !ok || len(m) != len(v.keys) {
			t.Fatalf("object of %d became %v", len(v.keys), got)
		}
		for i, k := range v.keys {
			e, ok := m[k]
			if !ok {
				t.Fatalf("key %q lost", k)
			}
			v.elems[i].sameAs(t, e)
		}
	}
}

func TestJSON_RoundTripIsExact(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	identity, err := env.Compile("input", "p", JSON, Scope{})
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		v := genJSON(3).Draw(t, "value")
		var text strings.Builder
		v.encode(&text)
		val, err := FromJSON([]byte(text.String()), 64)
		if err != nil {
			t.Fatalf("FromJSON(%s): %v", text.String(), err)
		}
		out, err := ToJSON(val, 1<<30, 64)
		if err != nil {
			t.Fatalf("ToJSON: %v", err)
		}
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var got any
		if err := d.Decode(&got); err != nil {
			t.Fatalf("ToJSON wrote %s, not JSON: %v", out, err)
		}
		v.sameAs(t, got)

		again, err := FromJSON(out, 64)
		if err != nil {
			t.Fatal(err)
		}
		out2, _ := ToJSON(again, 1<<30, 64)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable: %s then %s", out, out2)
		}
		evaluated, err := identity.EvalJSON(Vars{Input: json.RawMessage(text.String())})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, evaluated) {
			t.Fatalf("the expression input answered %s, not %s", evaluated, out)
		}
	})
}

func TestJSON_DepthIsBounded(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	_, err := FromJSON([]byte(deep), 64)
	require.Error(t, err)
	ok := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	val, err := FromJSON([]byte(ok), 64)
	require.NoError(t, err)
	_, err = ToJSON(val, 1<<20, 63)
	require.Error(t, err)
}
