package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/store/memstore"
)

// BenchmarkStepDecisions runs five-step workflows one at a time on the
// in-memory store, through one worker that claims the first task with a
// poll and each next one eagerly with its report of the one before (the
// completion's decision hands the next task off, as a waiting poll's
// would), so that every step is the same decisions in the same order
// and its allocations and instructions are deterministic: the decision
// path's cost per step without a network, a database or other goroutines
// (b.N counts steps).
//
//	go test -run '^$' -bench StepDecisions -benchmem ./engine/
func BenchmarkStepDecisions(b *testing.B) {
	const steps = 5
	eng, err := New(Config{Store: memstore.New(memstore.Config{})})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	def := seq("s1", "s2", "s3", "s4", "s5")
	var activities []string
	for _, a := range def.Actions {
		activities = append(activities, a.Activity)
	}
	next := &PollParams{TenantID: tenant, WorkerID: "w", Activities: activities}
	output := json.RawMessage(`{}`)
	b.ReportAllocs()
	b.ResetTimer()
	for range max(1, b.N/steps) {
		if _, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "bench"}); err != nil {
			b.Fatal(err)
		}
		tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 1})
		if err != nil || len(tasks) != 1 {
			b.Fatalf("poll: %v, %d tasks", err, len(tasks))
		}
		for done := 0; done < steps; done++ {
			res, err := eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w", Output: output, Next: next})
			if err != nil {
				b.Fatal(err)
			}
			if want := min(1, steps-1-done); len(res.Tasks) != want {
				b.Fatalf("step %d: %d next tasks, want %d", done+1, len(res.Tasks), want)
			}
			tasks = res.Tasks
		}
	}
}
