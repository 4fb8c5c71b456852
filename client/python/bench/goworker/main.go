// Command goworker is the Go side of the Python SDK's worker benchmark
// (client/python/bench/steps.py): the Go worker runtime with one no-op
// activity, the same work the Python worker is measured on. It runs until
// SIGTERM or SIGINT.
//
//	goworker -url http://127.0.0.1:7400 -activity noop -concurrency 16
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:7400", "weftd's address")
	activity := flag.String("activity", "noop", "the no-op activity's name")
	concurrency := flag.Int("concurrency", 16, "tasks in flight at once")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c := client.New(*url)
	wk := worker.New(c, worker.Options{WorkerID: "go-bench", Concurrency: *concurrency,
		PollWait: 5 * time.Second, HeartbeatInterval: -1, ShutdownTimeout: 10 * time.Second})
	worker.Register(wk, *activity, func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	if err := wk.Run(ctx); err != nil {
		slog.Error("worker stopped", "err", err)
		os.Exit(1)
	}
}
