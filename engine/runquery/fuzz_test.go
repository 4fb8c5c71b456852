package runquery

import (
	"errors"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzQuery parses, checks, evaluates and plans any text: never a panic;
// an error is an *Error whose column lies within the text (or just past
// its end); a query that checks writes a canonical form that reads back
// to itself and matches as it does.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{`status = "FAILED" AND plan = "order-fulfilment" AND customer = "acme" AND failedStep = "charge" AND createdAt > "2026-11-28T10:00:00Z"`,
		`NOT (a = 1 OR b IN (1, 2.5, "x"))`, `runId STARTS_WITH 'r-\u00e9'`, `attempts > 1.5 AND attempts <= 9007199254740993`, `vip = TRUE OR endedAt = NULL`,
		`status NOT IN ("FAILED")`, `((((`, `"unterminated`, `x = 1e999`, `score < -0.0`} {
		f.Add(s)
	}
	schema, err := NewSchema(map[string]Type{"customer": Keyword, "attempts": Int, "score": Double, "vip": Bool, "dueAt": Time})
	if err != nil {
		f.Fatal(err)
	}
	run := Values{FieldStatus: KeywordValue("FAILED"), FieldPlan: KeywordValue("order"), "customer": KeywordValue("acme"),
		"attempts": IntValue(2), "score": DoubleValue(0.5), "vip": BoolValue(true), FieldCreatedAt: TimeValue(time.Unix(1_800_000_000, 0))}
	f.Fuzz(func(t *testing.T, src string) {
		q, err := Compile(src, schema)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T", err)
			}
			if limit := utf8.RuneCountInString(src) + 1; e.Column < 1 || e.Column > max(limit, 1) || e.Message == "" {
				t.Fatalf("error %q at column %d of %d", e.Message, e.Column, limit)
			}
			return
		}
		again, err := Compile(q.String(), schema)
		if err != nil || again.String() != q.String() {
			t.Fatalf("%q: canonical form %q does not read back: %v", src, q.String(), err)
		}
		if q.Match(run) != again.Match(run) {
			t.Fatalf("%q and its canonical form disagree", src)
		}
		if p := q.Plan(nil); q.Match(run) && p.Scan != nil {
			if v, ok := run[p.Scan.Field]; !ok || !p.Scan.Contains(v) {
				t.Fatalf("%q: the scan leaves out a matching run", src)
			}
		}
	})
}
