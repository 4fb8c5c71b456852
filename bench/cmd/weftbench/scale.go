package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/weft-dev/weft/bench"
)

// scaleOptions are the scale mode's flags, defaulted from the environment.
type scaleOptions struct {
	on, only                                           *bool
	configs, stored, profile                           *string
	active, clients, workflows, rounds, profileSeconds *int
	settle, timer                                      *time.Duration
}

func scaleFlags(fs *flag.FlagSet, getenv func(string) string) *scaleOptions {
	return &scaleOptions{
		on:        fs.Bool("scale", envBool(getenv, "WEFT_BENCH_SCALE"), "also measure the scale targets (slow)"),
		only:      fs.Bool("scale-only", envBool(getenv, "WEFT_BENCH_SCALE_ONLY"), "measure the scale targets alone"),
		configs:   fs.String("scale-configs", envOr(getenv, "WEFT_BENCH_SCALE_CONFIGS", bench.Embedded), "configurations at scale: cluster,embedded"),
		stored:    fs.String("scale-stored", envOr(getenv, "WEFT_BENCH_SCALE_STORED", joinInts(bench.DefaultScaleStored)), "completed-run counts measured, ascending (none: skip)"),
		active:    fs.Int("scale-active", envInt(getenv, "WEFT_BENCH_SCALE_ACTIVE", bench.DefaultScaleActive), "active runs (0: skip)"),
		clients:   fs.Int("scale-c", envInt(getenv, "WEFT_BENCH_SCALE_C", bench.DefaultScaleClients), "the workload's C at each size"),
		workflows: fs.Int("scale-w", envInt(getenv, "WEFT_BENCH_SCALE_W", 0), "the workload's W at each size (default: -w)"),
		rounds:    fs.Int("scale-rounds", envInt(getenv, "WEFT_BENCH_SCALE_ROUNDS", bench.DefaultScaleRounds), "workload rounds at each size (the median stands)"),
		timer:     fs.Duration("scale-active-timer", envDuration(getenv, "WEFT_BENCH_SCALE_ACTIVE_TIMER", 0), "active runs first wait this long for a signal, so weftd's timer loop drives each once (default 0: off)"),
		settle:    fs.Duration("scale-settle", envDuration(getenv, "WEFT_BENCH_SCALE_SETTLE", bench.DefaultScaleSettle), "background loops before memory is read"),
		profile:   fs.String("scale-profile", getenv("WEFT_BENCH_SCALE_PROFILE"), "directory for weftd CPU profiles (default none)"),
		profileSeconds: fs.Int("scale-profile-seconds", envInt(getenv, "WEFT_BENCH_SCALE_PROFILE_SECONDS", bench.DefaultScaleProfileSeconds),
			"how long each CPU profile samples, from the start of a workload's first round"),
	}
}

// config answers the scale configuration, or nil when the mode is off.
func (o *scaleOptions) config() (*bench.ScaleConfig, error) {
	if !*o.on && !*o.only {
		return nil, nil
	}
	s := &bench.ScaleConfig{Configs: strings.Split(*o.configs, ","), Active: *o.active, Clients: *o.clients,
		Workflows: *o.workflows, Rounds: *o.rounds, Settle: *o.settle, ActiveTimer: *o.timer, ProfileDir: *o.profile, ProfileSeconds: *o.profileSeconds, Only: *o.only, SkipActive: *o.active == 0}
	if *o.stored == "none" || *o.stored == "" {
		s.SkipStored = true
	} else {
		stored, err := ints(*o.stored)
		if err != nil {
			return nil, fmt.Errorf("stored-run counts must be whole numbers, got %q", *o.stored)
		}
		s.Stored = stored
	}
	return s, nil
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ",")
}
