package store

import "testing"

// BenchmarkKey builds the keys of a step's decision: an event's, a task's
// and a timer's.
//
//	go test -run '^$' -bench Key -benchmem ./store/
func BenchmarkKey(b *testing.B) {
	const run = "0f8e2a4c-9b1d-4e6f-8a2c-3d5e7f9a1b2c"
	b.ReportAllocs()
	for b.Loop() {
		_ = Key("wf", run, "ev", Uint64(42))
		_ = Key("task", run+"/s3/1")
		_ = Key("tmr", Int64(1_800_000_000_000_000_000), run, "attempt", "s3:1")
	}
}
