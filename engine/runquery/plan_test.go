package runquery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPlan_PicksTheMostSelectiveIndexableConjunct(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	cases := []struct {
		name string
		src  string
		want *Scan // nil: read every run
	}{
		{name: "the issue's operator query reads one customer", src: `status = "FAILED" AND plan = "order-fulfilment" AND customer = "acme" AND failedStep = "charge" AND createdAt > "2026-11-28T10:00:00Z"`,
			want: &Scan{Field: "customer", Type: Keyword, Points: []Value{KeywordValue("acme")}}},
		{name: "a run id beats everything", src: `customer = "acme" AND runId = "r-1"`, want: &Scan{Field: FieldRunID, Type: Keyword, Points: []Value{KeywordValue("r-1")}}},
		{name: "IN is points, sorted and unique", src: `status IN ("FAILED", "CANCELLED", "FAILED")`,
			want: &Scan{Field: FieldStatus, Type: Keyword, Points: []Value{KeywordValue("CANCELLED"), KeywordValue("FAILED")}}},
		{name: "an OR of equalities on one field is points", src: `(status = "FAILED" OR status IN ("PAUSED")) AND NOT plan = "x"`,
			want: &Scan{Field: FieldStatus, Type: Keyword, Points: []Value{KeywordValue("FAILED"), KeywordValue("PAUSED")}}},
		{name: "an OR over two fields is not indexable", src: `status = "FAILED" OR plan = "x"`},
		{name: "NOT, != and NULL are not indexable", src: `NOT status = "FAILED" AND plan != "x" AND endedAt = NULL AND customer NOT IN ("a")`},
		{name: "two bounds make one range", src: `createdAt >= "2026-11-28T10:00:00Z" AND createdAt < "2026-11-28T11:00:00Z"`,
			want: &Scan{Field: FieldCreatedAt, Type: Time, Range: &Range{Lower: &Bound{Value: TimeValue(t0), Inclusive: true}, Upper: &Bound{Value: TimeValue(t1)}}}},
		{name: "the tighter bound wins", src: `createdAt > "2026-11-28T10:00:00Z" AND createdAt >= "2026-11-28T11:00:00Z" AND createdAt <= "2026-11-28T11:00:00Z"`,
			want: &Scan{Field: FieldCreatedAt, Type: Time, Range: &Range{Lower: &Bound{Value: TimeValue(t1), Inclusive: true}, Upper: &Bound{Value: TimeValue(t1), Inclusive: true}}}},
		{name: "a closed range beats an open one", src: `endedAt > "2026-11-28T10:00:00Z" AND createdAt > "2026-11-28T10:00:00Z" AND createdAt < "2026-11-28T11:00:00Z"`,
			want: &Scan{Field: FieldCreatedAt, Type: Time, Range: &Range{Lower: &Bound{Value: TimeValue(t0)}, Upper: &Bound{Value: TimeValue(t1)}}}},
		{name: "STARTS_WITH is a prefix range", src: `runId STARTS_WITH "r-"`,
			want: &Scan{Field: FieldRunID, Type: Keyword, Range: &Range{Lower: &Bound{Value: KeywordValue("r-"), Inclusive: true}, Upper: &Bound{Value: KeywordValue("r.")}}}},
		{name: "points narrowed by a range", src: `attempts IN (1, 5, 9) AND attempts > 2 AND attempts < 9`,
			want: &Scan{Field: "attempts", Type: Int, Points: []Value{IntValue(5)}}},
		{name: "contradicting equalities read nothing", src: `customer = "a" AND customer = "b" AND status = "FAILED"`,
			want: &Scan{Field: "customer", Type: Keyword, Points: []Value{}}},
		{name: "an int field's double bound becomes an int", src: `attempts > 1.5 AND attempts <= 7.9`,
			want: &Scan{Field: "attempts", Type: Int, Range: &Range{Lower: &Bound{Value: IntValue(2), Inclusive: true}, Upper: &Bound{Value: IntValue(7), Inclusive: true}}}},
		{name: "an int field's fractional point matches nothing", src: `attempts = 1.5`, want: &Scan{Field: "attempts", Type: Int, Points: []Value{}}},
		{name: "an int field's integral double point", src: `attempts = 2.0`, want: &Scan{Field: "attempts", Type: Int, Points: []Value{IntValue(2)}}},
		{name: "a double field's int point", src: `score = 2`, want: &Scan{Field: "score", Type: Double, Points: []Value{DoubleValue(2)}}},
		{name: "a double field's inexact int bound", src: `score > 9007199254740993`,
			want: &Scan{Field: "score", Type: Double, Range: &Range{Lower: &Bound{Value: DoubleValue(9007199254740992)}}}},
		{name: "a bool is indexable too", src: `vip = TRUE`, want: &Scan{Field: "vip", Type: Bool, Points: []Value{BoolValue(true)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q, err := Compile(c.src, schema)
			require.NoError(t, err)
			p := q.Plan(nil)
			if c.want == nil {
				require.Nil(t, p.Scan)
				return
			}
			require.NotNil(t, p.Scan)
			require.Equal(t, *c.want, *p.Scan)
		})
	}
}

func TestPlan_AnEstimatorRanksTheScans(t *testing.T) {
	t.Parallel()
	q, err := Compile(`customer = "acme" AND status = "FAILED"`, testSchema(t))
	require.NoError(t, err)
	require.Equal(t, "customer", q.Plan(nil).Scan.Field)
	stats := func(s Scan) (int64, bool) {
		if s.Field == FieldStatus {
			return 3, true // few failed runs today
		}
		return 0, false
	}
	p := q.Plan(stats)
	require.Equal(t, FieldStatus, p.Scan.Field)
	require.Equal(t, int64(3), p.Estimate)
}

func TestPlan_AFieldNotIndexedIsNotScanned(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	f := schema.fields["customer"]
	f.Indexed = false
	schema.fields["customer"] = f
	q, err := Compile(`customer = "acme"`, schema)
	require.NoError(t, err)
	require.Nil(t, q.Plan(nil).Scan)
}

// TestFieldScan_AnswersOneFieldsMergedConjunctsWhicheverThePlanReads: the
// scan of a field the plan does not read is its top-level conjuncts'
// merged, as the plan would merge them; a field named only under OR or
// NOT has none.
func TestFieldScan_AnswersOneFieldsMergedConjunctsWhicheverThePlanReads(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	q, err := Compile(`plan = "p" AND planVersion IN ("1", "2", "3") AND planVersion >= "2" AND (status = "FAILED" OR customer = "a")`, schema)
	require.NoError(t, err)
	s, ok := q.FieldScan(FieldPlanVersion)
	require.True(t, ok)
	require.Equal(t, Scan{Field: FieldPlanVersion, Type: Keyword, Points: []Value{KeywordValue("2"), KeywordValue("3")}}, s)
	_, ok = q.FieldScan(FieldStatus)
	require.False(t, ok, "status is only under OR")
	s, ok = q.FieldScan(FieldPlan)
	require.True(t, ok)
	require.Equal(t, Scan{Field: FieldPlan, Type: Keyword, Points: []Value{KeywordValue("p")}}, s)
}
