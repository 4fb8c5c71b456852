package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/store/memstore"
)

// BenchmarkFanOut_ItemsAgainstASequence times one run of 100 no-op items
// of a forEach step (maxConcurrency 10 and 100) and of a sequence of 100
// no-op steps on the memory store, each task claimed by a poll and
// completed, one run at a time: the engine's own cost of a fan-out's item
// beside a sequence's step (docs/performance.md#fan-out).
func BenchmarkFanOut_ItemsAgainstASequence(b *testing.B) {
	seq100 := definition.Definition{PlanID: "seq", PlanVersion: "1"}
	for i := range 100 {
		seq100.Actions = append(seq100.Actions, definition.Action{ID: fmt.Sprint("s", i), Order: i + 1, Activity: "x"})
	}
	fan := func(conc int) definition.Definition {
		return definition.Definition{PlanID: "fan", PlanVersion: "1", Actions: []definition.Action{
			{ID: "each", Order: 1, Activity: "x", ForEach: "lists.range(100)", MaxConcurrency: conc}}}
	}
	for _, c := range []struct {
		name string
		def  definition.Definition
	}{{"sequence", seq100}, {"forEach-10", fan(10)}, {"forEach-100", fan(100)}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			eng, err := New(Config{Store: memstore.New(memstore.Config{})})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: c.def, Start: true, RunRequestID: fmt.Sprint(i)})
				if err != nil {
					b.Fatal(err)
				}
				for done := 0; done < 100; {
					tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"x"}, MaxTasks: 100})
					if err != nil || len(tasks) == 0 {
						b.Fatalf("run %s: %d of 100 done, poll: %v", res.Run.RunID, done, err)
					}
					for _, t := range tasks {
						if _, err := eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: t.Token, WorkerID: "w", Output: json.RawMessage(`1`)}); err != nil {
							b.Fatal(err)
						}
						done++
					}
				}
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "items/s")
		})
	}
}
