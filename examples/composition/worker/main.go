// Command worker is the composition example's Weft worker: it runs the activities and
// compensations of examples/composition/order.yaml and notify.yaml until interrupted.
//
//	go run ./examples/composition/worker [--addr URL] [--queue Q] [--concurrency N]
//
// The address defaults to $WEFT_URL, then http://127.0.0.1:7400; a bearer
// token is taken from $WEFT_TOKEN. On SIGINT or SIGTERM it stops polling and
// lets running tasks finish for up to 30 s.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	"github.com/weft-dev/weft/examples/composition"
)

func main() {
	addr := flag.String("addr", envOr("WEFT_URL", "http://127.0.0.1:7400"), "weftd base URL")
	queue := flag.String("queue", "default", "the task queue to poll")
	concurrency := flag.Int("concurrency", 4, "tasks run at once")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	var opts []client.Option
	if token := os.Getenv("WEFT_TOKEN"); token != "" {
		opts = append(opts, client.WithToken(token))
	}
	w := worker.New(client.New(*addr, opts...), worker.Options{Queue: *queue, Concurrency: *concurrency, Logger: log})
	composition.Register(w, log)
	log.Info("composition example worker polling", "addr", *addr, "queue", *queue)
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
