package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/store"
)

// auditOptions say whether weftd keeps an audit log and for how long.
type auditOptions struct {
	// mode is "auto" (on when callers authenticate), "on" or "off".
	mode      string
	retention time.Duration
}

const (
	defaultAuditRetention = 365 * 24 * time.Hour
	auditSweepEvery       = time.Hour
)

// auditFlags declares the audit flags on fs and answers the function that
// reads them once fs is parsed.
func auditFlags(fs *flag.FlagSet, getenv func(string) string) func() (auditOptions, error) {
	mode := fs.String("audit", envOr(getenv, "WEFT_AUDIT", "auto"), `audit log of every mutating call: "auto" (on when callers authenticate), "on" or "off"`)
	retention := fs.String("audit-retention", envOr(getenv, "WEFT_AUDIT_RETENTION", "365d"), "how long audit records are kept, e.g. 2160h or 90d")
	return func() (auditOptions, error) {
		switch *mode {
		case "auto", "on", "off":
		default:
			return auditOptions{}, fmt.Errorf(`audit must be auto, on or off, got %q`, *mode)
		}
		d, err := retentionOption(*retention)
		if err != nil || d < time.Hour {
			return auditOptions{}, fmt.Errorf("audit retention must be a duration of at least 1h or whole days like 90d, got %q", *retention)
		}
		return auditOptions{mode: *mode, retention: d}, nil
	}
}

// startAudit answers the audit log weftd keeps in st (nil when off) and
// starts removing records older than the retention, until ctx ends.
func startAudit(ctx context.Context, opts options, authenticates bool, st store.Store, logger *slog.Logger) *audit.Log {
	on := opts.audit.mode == "on" || (opts.audit.mode == "auto" && authenticates)
	if !on {
		logger.Info("weftd keeps no audit log", slog.String("audit", opts.audit.mode))
		return nil
	}
	log := audit.New(st, nil)
	logger.Info("weftd keeps an audit log of every mutating call", slog.Duration("retention", opts.audit.retention))
	go sweepAudit(ctx, log, opts.audit.retention, logger)
	return log
}

func sweepAudit(ctx context.Context, log *audit.Log, retention time.Duration, logger *slog.Logger) {
	t := time.NewTicker(auditSweepEvery)
	defer t.Stop()
	for {
		if n, err := log.Sweep(ctx, time.Now().Add(-retention)); err != nil && ctx.Err() == nil {
			logger.Warn("audit retention sweep failed", slog.String("error", err.Error()))
		} else if n > 0 {
			logger.Info("audit records past retention removed", slog.Int("records", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
