package runquery

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The property tests' fields and the pools their values and literals are
// drawn from, small enough that queries match some runs.
var (
	propFields = []propField{
		{FieldStatus, Keyword, true}, {FieldPlan, Keyword, false}, {FieldRunID, Keyword, false}, {FieldCreatedAt, Time, false},
		{FieldEndedAt, Time, false}, {"customer", Keyword, false}, {"attempts", Int, false}, {"score", Double, false},
		{"vip", Bool, false}, {"dueAt", Time, false},
	}
	keywordPool = []string{"", "a", "acme", "acme-1", "b", "beta", "日本", "FAILED", "RUNNING"}
	statusPool  = []string{"FAILED", "RUNNING", "COMPLETED", "CANCELLED"}
	intPool     = []int64{-3, 0, 1, 2, 9007199254740993}
	doublePool  = []float64{-1.5, 0, 1, 2, 2.5, 9007199254740992}
	timePool    = []time.Time{time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 28, 10, 0, 0, 1, time.UTC)}
)

// propField is a field of the property tests.
type propField struct {
	name string
	typ  Type
	enum bool
}

// genRun draws a run: each field present or not.
func genRun(t *rapid.T) Values {
	r := Values{}
	for _, f := range propFields {
		if rapid.IntRange(0, 4).Draw(t, "absent") == 0 {
			continue
		}
		r[f.name] = genValue(t, f.typ, f.enum)
	}
	return r
}

// genValue draws a value of type typ.
func genValue(t *rapid.T, typ Type, enum bool) Value {
	switch typ {
	case Keyword:
		if enum {
			return KeywordValue(rapid.SampledFrom(statusPool).Draw(t, "status"))
		}
		return KeywordValue(rapid.SampledFrom(keywordPool).Draw(t, "kw"))
	case Int:
		return IntValue(rapid.SampledFrom(intPool).Draw(t, "int"))
	case Double:
		return DoubleValue(rapid.SampledFrom(doublePool).Draw(t, "double"))
	case Bool:
		return BoolValue(rapid.Bool().Draw(t, "bool"))
	}
	return TimeValue(rapid.SampledFrom(timePool).Draw(t, "time"))
}

// gq is a generated query: its text and an oracle that decides it over a run.
type gq struct {
	text   string
	oracle func(Values) bool
	kids   []gq
}

// genQuery draws a query at most depth deep.
func genQuery(t *rapid.T, depth int) gq {
	if depth == 0 || rapid.IntRange(0, 2).Draw(t, "leaf") == 0 {
		return genCompare(t)
	}
	switch rapid.IntRange(0, 2).Draw(t, "node") {
	case 0:
		x := genQuery(t, depth-1)
		return gq{text: rapid.SampledFrom([]string{"NOT ", "not "}).Draw(t, "not") + "(" + x.text + ")",
			oracle: func(r Values) bool { return !x.oracle(r) }}
	case 1:
		a, b := genQuery(t, depth-1), genQuery(t, depth-1)
		return gq{text: "(" + a.text + ") AND (" + b.text + ")", oracle: func(r Values) bool { return a.oracle(r) && b.oracle(r) }, kids: []gq{a, b}}
	}
	a, b := genQuery(t, depth-1), genQuery(t, depth-1)
	return gq{text: "(" + a.text + ") or (" + b.text + ")", oracle: func(r Values) bool { return a.oracle(r) || b.oracle(r) }}
}

// genCompare draws one comparison valid for its field's type.
func genCompare(t *rapid.T) gq {
	return genCompareOf(t, propFields)
}

// genCompareOf draws one comparison of one of fields.
func genCompareOf(t *rapid.T, fields []propField) gq {
	f := rapid.SampledFrom(fields).Draw(t, "field")
	var opsOf []string
	switch {
	case f.enum:
		opsOf = []string{"=", "!=", "IN", "NOT IN", "= NULL", "!= NULL"}
	case f.typ == Bool:
		opsOf = []string{"=", "!=", "= NULL"}
	case f.typ == Keyword:
		opsOf = []string{"=", "!=", "<", "<=", ">", ">=", "IN", "NOT IN", "STARTS_WITH", "= NULL", "!= NULL"}
	default:
		opsOf = []string{"=", "!=", "<", "<=", ">", ">=", "IN", "NOT IN", "!= NULL"}
	}
	op := rapid.SampledFrom(opsOf).Draw(t, "op")
	name := f.name
	switch op {
	case "= NULL", "!= NULL":
		present := op == "!= NULL"
		return gq{text: name + " " + op, oracle: func(r Values) bool { _, ok := r[name]; return ok == present }}
	case "IN", "NOT IN":
		n := rapid.IntRange(1, 3).Draw(t, "n")
		var lits []string
		var vals []Value
		for range n {
			v := genLiteralValue(t, f.typ, f.enum)
			lits, vals = append(lits, literalText(t, v)), append(vals, v)
		}
		neg := op == "NOT IN"
		return gq{text: name + " " + op + " (" + strings.Join(lits, ", ") + ")", oracle: func(r Values) bool {
			v, ok := r[name]
			if !ok {
				return neg
			}
			for _, x := range vals {
				if oracleCompare(v, x) == 0 {
					return !neg
				}
			}
			return neg
		}}
	}
	v := genLiteralValue(t, f.typ, f.enum)
	if op == "STARTS_WITH" && v.S == "" {
		v = KeywordValue("a")
	}
	return gq{text: name + " " + op + " " + literalText(t, v), oracle: func(r Values) bool {
		got, ok := r[name]
		if !ok {
			return op == "!="
		}
		c := oracleCompare(got, v)
		switch op {
		case "=":
			return c == 0
		case "!=":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		case ">=":
			return c >= 0
		}
		return strings.HasPrefix(got.S, v.S) // STARTS_WITH
	}}
}

// genLiteralValue draws a literal's value: for a number field, an int or a
// double (the other type's pool too).
func genLiteralValue(t *rapid.T, typ Type, enum bool) Value {
	if typ == Int || typ == Double {
		if rapid.Bool().Draw(t, "numtype") {
			return IntValue(rapid.SampledFrom(intPool).Draw(t, "int"))
		}
		return DoubleValue(rapid.SampledFrom(append([]float64{1.5, 7.25}, doublePool...)).Draw(t, "double"))
	}
	return genValue(t, typ, enum)
}

// literalText writes a value as a query literal, in one of its spellings.
func literalText(t *rapid.T, v Value) string {
	switch v.Type {
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Double:
		s := strconv.FormatFloat(v.F, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += rapid.SampledFrom([]string{".0", "e0"}).Draw(t, "dbl")
		}
		return s
	case Bool:
		return rapid.SampledFrom([]string{strings.ToUpper(strconv.FormatBool(v.B)), strconv.FormatBool(v.B)}).Draw(t, "bool")
	case Time:
		return `"` + v.T.Format(time.RFC3339Nano) + `"`
	}
	if rapid.Bool().Draw(t, "quote") && !strings.Contains(v.S, "'") {
		return "'" + v.S + "'"
	}
	return strconv.Quote(v.S)
}

// oracleCompare is the brute-force order: strings by bytes, numbers by
// their exact values (math/big), times by instant, false before true.
func oracleCompare(a, b Value) int {
	switch a.Type {
	case Keyword:
		return strings.Compare(a.S, b.S)
	case Time:
		return a.T.Compare(b.T)
	case Bool:
		return boolInt(a.B) - boolInt(b.B)
	}
	return exact(a).Cmp(exact(b))
}

func exact(v Value) *big.Float {
	if v.Type == Int {
		return new(big.Float).SetInt64(v.I)
	}
	return big.NewFloat(v.F)
}

// fieldValue answers a run's value of the scanned field.
func TestQuery_MatchesTheBruteForceFilterAndThePlanNeverLosesARun(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	rapid.Check(t, func(t *rapid.T) {
		g := genQuery(t, 3)
		q, err := Compile(g.text, schema)
		if err != nil {
			t.Fatalf("%s: %v", g.text, err)
		}
		again, err := Compile(q.String(), schema)
		if err != nil || again.String() != q.String() {
			t.Fatalf("canonical form %q does not read back: %v", q.String(), err)
		}
		plan := q.Plan(nil)
		runs := rapid.SliceOfN(rapid.Custom(genRun), 1, 30).Draw(t, "runs")
		for _, r := range runs {
			got, want := q.Match(r), g.oracle(r)
			if got != want {
				t.Fatalf("%s over %v: Match %v, brute force %v", g.text, r, got, want)
			}
			if again.Match(r) != want {
				t.Fatalf("canonical %s over %v differs", q.String(), r)
			}
			if got && plan.Scan != nil {
				v, ok := r[plan.Scan.Field]
				if !ok || !plan.Scan.Contains(v) {
					t.Fatalf("%s: the plan's scan %+v leaves out the matching run %v", g.text, fmtScan(plan.Scan), r)
				}
			}
		}
	})
}

func fmtScan(s *Scan) string {
	if s.Range != nil {
		return fmt.Sprintf("%s range %+v %+v", s.Field, s.Range.Lower, s.Range.Upper)
	}
	return fmt.Sprintf("%s points %v", s.Field, s.Points)
}

// TestPlan_MergedConjunctsNeverLoseARun draws conjunctions of several
// comparisons on few fields, so that bounds and points on the same field
// are merged, and checks the scan still reads every matching run.
func TestPlan_MergedConjunctsNeverLoseARun(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	fields := []propField{{"attempts", Int, false}, {"score", Double, false}, {"customer", Keyword, false}}
	rapid.Check(t, func(t *rapid.T) {
		terms := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) gq { return genCompareOf(t, fields) }), 2, 4).Draw(t, "terms")
		texts := make([]string, len(terms))
		for i, g := range terms {
			texts[i] = g.text
		}
		q, err := Compile(strings.Join(texts, " AND "), schema)
		if err != nil {
			t.Fatal(err)
		}
		plan := q.Plan(nil)
		for _, r := range rapid.SliceOfN(rapid.Custom(genRun), 1, 30).Draw(t, "runs") {
			want := true
			for _, g := range terms {
				want = want && g.oracle(r)
			}
			if q.Match(r) != want {
				t.Fatalf("%s over %v: Match %v", q.String(), r, !want)
			}
			if want && plan.Scan != nil {
				if v, ok := r[plan.Scan.Field]; !ok || !plan.Scan.Contains(v) {
					t.Fatalf("%s: the plan's scan %s leaves out the matching run %v", q.String(), fmtScan(plan.Scan), r)
				}
			}
		}
	})
}

// TestPlan_BoundsOnOneFieldScanExactly draws conjunctions of =, IN and
// ranges on one field: the merged scan then reads exactly the matching
// runs, neither fewer nor more.
func TestPlan_BoundsOnOneFieldScanExactly(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom([]propField{{"attempts", Int, false}, {"score", Double, false}, {"customer", Keyword, false}}).Draw(t, "field")
		var texts []string
		for range rapid.IntRange(1, 4).Draw(t, "terms") {
			var g gq
			for g.text == "" || strings.Contains(g.text, "!=") || strings.Contains(g.text, "NOT IN") || strings.Contains(g.text, "NULL") {
				g = genCompareOf(t, []propField{f})
			}
			texts = append(texts, g.text)
		}
		q, err := Compile(strings.Join(texts, " AND "), schema)
		if err != nil {
			t.Fatal(err)
		}
		plan := q.Plan(nil)
		if plan.Scan == nil {
			t.Fatalf("%s: no scan", q.String())
		}
		for range 30 {
			r := Values{f.name: genValue(t, f.typ, false)}
			if got, want := plan.Scan.Contains(r[f.name]), q.Match(r); got != want {
				t.Fatalf("%s: the scan %s reads %v: %v, but it matches: %v", q.String(), fmtScan(plan.Scan), r[f.name], got, want)
			}
		}
	})
}
