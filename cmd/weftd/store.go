package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore"
)

// storePebble is the --store value of the embedded default.
const storePebble = "pebble"

// checkStore accepts "pebble" or a postgresql:// (or postgres://) URL. The
// error names only the scheme: a URL may carry a password.
func checkStore(v string) error {
	if v == storePebble || isSQLURL(v) {
		return nil
	}
	scheme, _, _ := strings.Cut(v, "://")
	if scheme == v {
		scheme = v
		if len(scheme) > 32 {
			scheme = scheme[:32] + "…"
		}
	}
	return fmt.Errorf("store must be %q or a postgresql:// URL, got %q", storePebble, scheme)
}

func isSQLURL(v string) bool {
	return strings.HasPrefix(v, "postgresql://") || strings.HasPrefix(v, "postgres://")
}

// openStore opens the configured backend and logs it, with its
// capabilities and a password-free location.
func openStore(ctx context.Context, opts options, logger *slog.Logger) (store.Store, error) {
	var (
		st       store.Store
		location string
		err      error
	)
	if isSQLURL(opts.store) {
		location = redactURL(opts.store)
		st, err = sqlstore.Open(ctx, sqlstore.Config{URL: opts.store, MaxConns: opts.sql.maxConns, CheckSchemaOnly: !opts.sql.migrate})
	} else {
		location = opts.dataDir
		st, err = openPebble(opts.dataDir, opts.pebbleCache, logger)
	}
	if err != nil {
		// The backends' errors may quote the URL; say only where it was.
		return nil, fmt.Errorf("open store at %s: %w", location, scrub(err, opts.store))
	}
	caps := st.Capabilities()
	logger.Info("weftd store opened", slog.String("backend", caps.Backend), slog.String("location", location),
		slog.Group("capabilities", slog.Bool("conditional_batch", caps.ConditionalBatch),
			slog.Bool("atomic_batch", caps.AtomicBatch), slog.Bool("read_after_write", caps.ReadAfterWrite),
			slog.Bool("scan_consistency", caps.ScanConsistency), slog.Bool("durable", caps.Durable),
			slog.Int("max_value_bytes", caps.MaxValueBytes)))
	return st, nil
}

// sqlOptions are the SQL store's settings.
type sqlOptions struct {
	// migrate applies missing migrations; false only checks them
	// (sqlstore.Config.CheckSchemaOnly).
	migrate bool
	// maxConns is the pool size (0: the URL's pool_max_conns, else 10).
	maxConns int32
}

// maxSQLConns bounds --sql-max-conns, so that a typo is an error and not a
// thousand connections.
const maxSQLConns = 1000

// sqlConnsOption parses --sql-max-conns; empty is 0 (the default).
func sqlConnsOption(text string) (int32, error) {
	if text == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > maxSQLConns {
		return 0, fmt.Errorf("sql max conns must be a whole number between 1 and %d, got %q", maxSQLConns, text)
	}
	return int32(n), nil
}

// openPebble opens the embedded store, creating its directory if missing,
// with a block cache of cacheBytes.
func openPebble(dir string, cacheBytes int64, logger *slog.Logger) (store.Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	return pebblestore.Open(dir, pebblestore.Config{Logger: logger, CacheBytes: cacheBytes})
}

// defaultPebbleCacheMiB is --pebble-cache-mib's default: the store's.
const defaultPebbleCacheMiB = pebblestore.DefaultCacheBytes >> 20

// maxPebbleCacheMiB bounds --pebble-cache-mib (64 GiB), so that a typo is an
// error and not an allocation.
const maxPebbleCacheMiB = 64 << 10

// cacheOption parses --pebble-cache-mib into bytes.
func cacheOption(text string) (int64, error) {
	mib, err := strconv.Atoi(text)
	if err != nil || mib < 1 || mib > maxPebbleCacheMiB {
		return 0, fmt.Errorf("pebble cache must be a whole number of MiB between 1 and %d, got %q", maxPebbleCacheMiB, text)
	}
	return int64(mib) << 20, nil
}

// redactURL answers a connection URL without its password (in the user
// info or a password query parameter).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, "://")
		return scheme + "://(unparseable URL)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// scrubbedError is an error whose text had a secret replaced.
type scrubbedError struct {
	text  string
	cause error
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.cause }

// scrub answers err with every occurrence of the raw store URL (and its
// password) replaced by the redacted URL.
func scrub(err error, raw string) error {
	if !isSQLURL(raw) {
		return err
	}
	text := strings.ReplaceAll(err.Error(), raw, redactURL(raw))
	if u, perr := url.Parse(raw); perr == nil && u.User != nil {
		if pw, has := u.User.Password(); has && pw != "" {
			text = strings.ReplaceAll(text, pw, "xxxxx")
		}
	}
	return &scrubbedError{text: text, cause: err}
}
