package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
)

// ReadyPath answers whether this weftd can serve: 200 "ready", or 503 with
// the reason for each dependency it cannot reach. HealthPath stays liveness:
// it answers 200 while the process serves HTTP at all.
const (
	ReadyPath  = "/readyz"
	HealthPath = "/healthz"
)

// ReadinessTimeout bounds each dependency's probe.
const ReadinessTimeout = 2 * time.Second

// ReadinessCheck is one dependency readiness depends on.
type ReadinessCheck struct {
	// Name names the dependency in the reason ("store", "redis").
	Name string
	// Probe answers nil when the dependency can be reached. Its error's text
	// is the reason /readyz gives: it must name no secret.
	Probe func(ctx context.Context) error
}

// readiness probes the dependencies for /readyz and gRPC health, and logs
// each change of state once (WARN when it becomes not ready, INFO when it is
// ready again).
type readiness struct {
	checks   []ReadinessCheck
	services map[string]bool
	logger   *slog.Logger
	mu       sync.Mutex
	lastNot  []string // the reasons of the last probe; nil when it was ready
	probed   bool
}

func newReadiness(checks []ReadinessCheck, logger *slog.Logger) *readiness {
	services := map[string]bool{"": true}
	for _, s := range ServiceNames {
		services[s] = true
	}
	return &readiness{checks: checks, services: services, logger: logger}
}

// probe runs every check at once and answers the reasons of those that
// failed, in check order; none when ready.
func (r *readiness) probe(ctx context.Context) []string {
	reasons := make([]string, len(r.checks))
	var wg sync.WaitGroup
	for i, c := range r.checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, ReadinessTimeout)
			defer cancel()
			if err := c.Probe(ctx); err != nil {
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
					err = errors.New("no answer within " + ReadinessTimeout.String())
				}
				reasons[i] = c.Name + ": " + err.Error()
			}
		}()
	}
	wg.Wait()
	var out []string
	for _, reason := range reasons {
		if reason != "" {
			out = append(out, reason)
		}
	}
	r.record(ctx, out)
	return out
}

// record logs a change of state.
func (r *readiness) record(ctx context.Context, reasons []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := strings.Join(r.lastNot, "; ")
	now := strings.Join(reasons, "; ")
	first := !r.probed
	r.probed, r.lastNot = true, reasons
	switch {
	case now != "" && now != was:
		r.logger.LogAttrs(ctx, slog.LevelWarn, "weftd not ready", slog.String("reason", now))
	case now == "" && (was != "" || first):
		r.logger.LogAttrs(ctx, slog.LevelInfo, "weftd ready")
	}
}

// ServeHTTP answers /readyz.
func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	reasons := r.probe(req.Context())
	if len(reasons) == 0 {
		_, _ = w.Write([]byte("ready\n"))
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte("not ready\n" + strings.Join(reasons, "\n") + "\n"))
}

// Check implements grpchealth.Checker: every service weftd serves (and "",
// the server as a whole) is SERVING when every dependency can be reached,
// NOT_SERVING otherwise; the reasons are in /readyz and the log.
func (r *readiness) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if !r.services[req.Service] {
		names := make([]string, 0, len(r.services))
		for s := range r.services {
			names = append(names, s)
		}
		sort.Strings(names)
		return nil, connect.NewError(connect.CodeNotFound, errors.New("unknown service; weftd serves "+strings.Join(names[1:], ", ")))
	}
	if len(r.probe(ctx)) > 0 {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}
