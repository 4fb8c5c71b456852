package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/store/memstore"
)

// BenchmarkSubmit submits weftbench's five-step workflow, started, on the
// in-memory store, one submission at a time: the submission path's cost —
// the run record and, once, its plan record — without a network or a
// database (b.N counts submissions).
//
//	go test -run '^$' -bench 'Submit$' -benchmem ./engine/
func BenchmarkSubmit(b *testing.B) {
	eng, err := New(Config{Store: memstore.New(memstore.Config{})})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p := SubmitParams{TenantID: tenant, Definition: seq("s1", "s2", "s3", "s4", "s5"), Start: true, SubmittedBy: "bench",
		Input: json.RawMessage(`{"n":1}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.SubmitRun(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
