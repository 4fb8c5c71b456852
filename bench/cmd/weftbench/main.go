// Command weftbench is Weft's end-to-end benchmark (issue 8; `make bench`).
// It measures the raw commit ceiling of PostgreSQL and Pebble, then W
// workflows of S no-op steps through a real weftd in the cluster and the
// embedded configurations, prints a table with the targets and writes
// the report as JSON. docs/performance.md explains every figure.
//
// Flags override environment variables, which override defaults:
//
//	-w        WEFT_BENCH_W        workflows per measurement (default 2000)
//	-s        WEFT_BENCH_S        no-op steps per workflow (default 5)
//	-c        WEFT_BENCH_C        comma-separated client concurrencies (default 1,16)
//	-configs  WEFT_BENCH_CONFIGS  cluster,embedded (default both)
//	-ceiling  WEFT_BENCH_CEILING  how long each ceiling commits (default 5s)
//	-workers  WEFT_BENCH_WORKERS  worker runtimes (default 4), each with
//	-slots    WEFT_BENCH_SLOTS    tasks in flight (default 16)
//	-weftd    WEFT_BENCH_WEFTD    a weftd binary (default: go build ./cmd/weftd)
//	-redis    WEFT_BENCH_REDIS    the cluster's Redis (default redis://127.0.0.1:6379)
//	-out      WEFT_BENCH_OUT      directory of the JSON report (default bench/out)
//	          WEFT_TEST_POSTGRES_URL  the PostgreSQL (default postgres://postgres@127.0.0.1:5432/postgres)
//
// The scale mode (issue 8's stored-runs and active-runs targets; slow: about
// 30 minutes on a 2-core machine) is opt-in:
//
//	-scale          WEFT_BENCH_SCALE=1        measure the scale targets too
//	-scale-only     WEFT_BENCH_SCALE_ONLY=1   measure them alone (no ceilings, no end-to-end table)
//	-scale-configs  WEFT_BENCH_SCALE_CONFIGS  configurations at scale (default embedded)
//	-scale-stored   WEFT_BENCH_SCALE_STORED   completed-run counts measured (default 10000,100000,1000000; none: skip)
//	-scale-active   WEFT_BENCH_SCALE_ACTIVE   active runs (default 100000; 0: skip)
//	-scale-c        WEFT_BENCH_SCALE_C        the workload's C at each size (default 16)
//	-scale-w        WEFT_BENCH_SCALE_W        the workload's W at each size (default: -w)
//	-scale-rounds   WEFT_BENCH_SCALE_ROUNDS   workload rounds at each size, the median standing (default 3)
//	-scale-settle   WEFT_BENCH_SCALE_SETTLE   background loops before memory is read (default 1m)
//	-scale-active-timer WEFT_BENCH_SCALE_ACTIVE_TIMER  active runs first wait this long for a signal
//	                that never comes, so the timer loop drives each once (default 0: off)
//	-scale-profile  WEFT_BENCH_SCALE_PROFILE  directory for weftd CPU profiles of each workload (default none)
//	-scale-profile-seconds WEFT_BENCH_SCALE_PROFILE_SECONDS  how long each samples (default 15; keep it
//	                within one round for profiles comparable per step)
//
// It exits 1 when a workflow fails or times out, or a service is missing; the
// targets' PASS and MISS are reported, not an exit status.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weft-dev/weft/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "weftbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	opts, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg, out := opts.cfg, opts.out
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	stopProfile, err := profileHarness(opts.harnessProfile)
	if err != nil {
		return err
	}
	report, err := bench.Run(ctx, cfg)
	stopProfile()
	if err != nil {
		return err
	}
	if err := report.RenderTable(stdout); err != nil {
		return err
	}
	path, err := writeJSON(report, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "JSON report: %s\n", path)
	return nil
}

// options are what the command line says.
type options struct {
	cfg bench.Config
	// out is the JSON report's directory.
	out string
	// harnessProfile, when set, is where the harness's own CPU profile goes.
	harnessProfile string
}

// profileHarness profiles this process's CPU into path until the answered
// function is called; nothing when path is empty.
func profileHarness(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("harness CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("harness CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	if err := checkEnv(getenv); err != nil {
		return options{}, err
	}
	fs := flag.NewFlagSet("weftbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := fs.Int("w", envInt(getenv, "WEFT_BENCH_W", bench.DefaultWorkflows), "workflows per measurement")
	s := fs.Int("s", envInt(getenv, "WEFT_BENCH_S", bench.DefaultSteps), "no-op steps per workflow")
	c := fs.String("c", envOr(getenv, "WEFT_BENCH_C", "1,16"), "comma-separated client concurrencies")
	configs := fs.String("configs", envOr(getenv, "WEFT_BENCH_CONFIGS", bench.Cluster+","+bench.Embedded), "cluster,embedded")
	ceiling := fs.Duration("ceiling", envDuration(getenv, "WEFT_BENCH_CEILING", bench.DefaultCeilingDuration), "how long each ceiling commits")
	workers := fs.Int("workers", envInt(getenv, "WEFT_BENCH_WORKERS", bench.DefaultWorkers), "worker runtimes")
	slots := fs.Int("slots", envInt(getenv, "WEFT_BENCH_SLOTS", bench.DefaultWorkerSlots), "tasks in flight per worker")
	weftd := fs.String("weftd", getenv("WEFT_BENCH_WEFTD"), "a weftd binary (default: built from this module)")
	redisURL := fs.String("redis", envOr(getenv, "WEFT_BENCH_REDIS", bench.DefaultRedisURL), "the cluster's Redis")
	out := fs.String("out", envOr(getenv, "WEFT_BENCH_OUT", filepath.Join("bench", "out")), "directory of the JSON report")
	noFlow := fs.Bool("no-flow", envBool(getenv, "WEFT_BENCH_NO_FLOW"),
		"skip the flow-control measurement (its rows share the cluster's database with the plain measurements')")
	harnessProfile := fs.String("harness-cpuprofile", getenv("WEFT_BENCH_HARNESS_CPUPROFILE"),
		"write the harness's own CPU profile (its clients and workers) to this file")
	sf := scaleFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	clients, err := ints(*c)
	if err != nil {
		return options{}, fmt.Errorf("client concurrencies must be whole numbers, got %q", *c)
	}
	scale, err := sf.config()
	if err != nil {
		return options{}, err
	}
	cfg := bench.Config{Workflows: *w, Steps: *s, Clients: clients, Configs: strings.Split(*configs, ","),
		CeilingDuration: *ceiling, Workers: *workers, WorkerSlots: *slots, NoFlow: *noFlow, Weftd: *weftd, Scale: scale,
		PostgresURL: envOr(getenv, "WEFT_TEST_POSTGRES_URL", bench.DefaultPostgresURL), RedisURL: *redisURL}
	return options{cfg: cfg, out: *out, harnessProfile: *harnessProfile}, nil
}

func writeJSON(r *bench.Report, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "weftbench-"+r.StartedAt.Format("20060102T150405Z")+".json")
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func envOr(getenv func(string) string, key, fallback string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return fallback
}

// checkEnv refuses numbers and durations in the environment that do not
// parse, which envInt and envDuration would otherwise ignore.
func checkEnv(getenv func(string) string) error {
	for _, key := range []string{"WEFT_BENCH_W", "WEFT_BENCH_S", "WEFT_BENCH_WORKERS", "WEFT_BENCH_SLOTS",
		"WEFT_BENCH_SCALE_ACTIVE", "WEFT_BENCH_SCALE_C", "WEFT_BENCH_SCALE_W", "WEFT_BENCH_SCALE_ROUNDS", "WEFT_BENCH_SCALE_PROFILE_SECONDS"} {
		if v := getenv(key); v != "" {
			if _, err := strconv.Atoi(v); err != nil {
				return fmt.Errorf("%s must be a whole number, got %q", key, v)
			}
		}
	}
	for _, key := range []string{"WEFT_BENCH_CEILING", "WEFT_BENCH_SCALE_SETTLE", "WEFT_BENCH_SCALE_ACTIVE_TIMER"} {
		if v := getenv(key); v != "" {
			if _, err := time.ParseDuration(v); err != nil {
				return fmt.Errorf("%s must be a duration such as 5s, got %q", key, v)
			}
		}
	}
	for _, key := range []string{"WEFT_BENCH_SCALE", "WEFT_BENCH_SCALE_ONLY"} {
		if v := getenv(key); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("%s must be 1 or 0, got %q", key, v)
			}
		}
	}
	return nil
}

func envBool(getenv func(string) string, key string) bool {
	b, _ := strconv.ParseBool(getenv(key))
	return b
}

func envInt(getenv func(string) string, key string, fallback int) int {
	n, err := strconv.Atoi(getenv(key))
	if err != nil {
		return fallback
	}
	return n
}

func envDuration(getenv func(string) string, key string, fallback time.Duration) time.Duration {
	d, err := time.ParseDuration(getenv(key))
	if err != nil {
		return fallback
	}
	return d
}
