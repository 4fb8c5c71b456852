package runquery

import "testing"

const benchQuery = `status = "FAILED" AND plan = "order-fulfilment" AND customer = "acme" AND failedStep = "charge" AND createdAt > "2026-11-28T10:00:00Z"`

func BenchmarkCompile(b *testing.B) {
	schema := testSchema(b)
	for b.Loop() {
		if _, err := Compile(benchQuery, schema); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	q, err := Compile(benchQuery, testSchema(b))
	if err != nil {
		b.Fatal(err)
	}
	run := Values{FieldStatus: KeywordValue("FAILED"), FieldPlan: KeywordValue("order-fulfilment"), "customer": KeywordValue("acme"),
		FieldFailedStep: KeywordValue("charge"), FieldCreatedAt: TimeValue(timePool[2])}
	for b.Loop() {
		if !q.Match(run) {
			b.Fatal("no match")
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	q, err := Compile(benchQuery, testSchema(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if q.Plan(nil).Scan == nil {
			b.Fatal("no scan")
		}
	}
}
