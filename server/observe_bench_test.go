package server

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/telemetry"
)

// BenchmarkObservedSteps is engine.BenchmarkStepDecisions (five-step runs,
// one worker, each next task claimed eagerly with the report of the one
// before; b.N counts steps) with the engine observed as weftd observes it:
// off (no Observer: the engine's own benchmark), metrics only (weftd's
// default), and tracing on at ratio 1 with the spans batched to an
// exporter that drops them (the cost of making and batching them, not of
// sending them).
//
//	go test -run '^$' -bench ObservedSteps -benchmem ./server/
func BenchmarkObservedSteps(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchSteps(b, nil) })
	b.Run("metrics", func(b *testing.B) {
		m, err := telemetry.NewMetrics()
		if err != nil {
			b.Fatal(err)
		}
		o, err := NewObserver(nil, m)
		if err != nil {
			b.Fatal(err)
		}
		benchSteps(b, o)
	})
	b.Run("tracing", func(b *testing.B) {
		m, err := telemetry.NewMetrics()
		if err != nil {
			b.Fatal(err)
		}
		tr := telemetry.NewTracingWith(sdktrace.NewBatchSpanProcessor(tracetest.NewNoopExporter()), 1, "bench")
		defer func() { _ = tr.Shutdown(context.Background()) }()
		o, err := NewObserver(tr, m)
		if err != nil {
			b.Fatal(err)
		}
		benchSteps(b, o)
	})
}

func benchSteps(b *testing.B, o *Observer) {
	const steps = 5
	cfg := engine.Config{Store: memstore.New(memstore.Config{})}
	if o != nil {
		cfg.Observer = o
	}
	eng, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	def := definition.Definition{PlanID: "plan", PlanVersion: "1"}
	var activities []string
	for i, id := range []string{"s1", "s2", "s3", "s4", "s5"} {
		def.Actions = append(def.Actions, definition.Action{ID: id, Order: i + 1, Activity: "act-" + id})
		activities = append(activities, "act-"+id)
	}
	const tenant = "tenant-a"
	next := &engine.PollParams{TenantID: tenant, WorkerID: "w", Activities: activities}
	output := json.RawMessage(`{}`)
	b.ReportAllocs()
	b.ResetTimer()
	for range max(1, b.N/steps) {
		if _, err := eng.SubmitRun(ctx, engine.SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "bench"}); err != nil {
			b.Fatal(err)
		}
		tasks, err := eng.PollTasks(ctx, engine.PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 1})
		if err != nil || len(tasks) != 1 {
			b.Fatalf("poll: %v, %d tasks", err, len(tasks))
		}
		for done := 0; done < steps; done++ {
			res, err := eng.CompleteTask(ctx, engine.ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w", Output: output, Next: next})
			if err != nil {
				b.Fatal(err)
			}
			tasks = res.Tasks
		}
	}
}
