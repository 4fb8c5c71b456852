package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/store"
)

// Dialect is the database behind the connection.
type Dialect string

const (
	// CockroachDB: transactions are retried in place by the crdb helper.
	CockroachDB Dialect = "cockroachdb"
	// PostgreSQL: a serialization failure dooms the transaction, so it is
	// restarted from BEGIN.
	PostgreSQL Dialect = "postgresql"
)

// Config configures a Store.
type Config struct {
	// URL is a pgx connection string, e.g.
	// postgresql://root@crdb:26257/weft?sslmode=verify-full.
	URL string
	// Schema, when set, becomes the connections' search_path: the schema must
	// exist. Tests use it to isolate each test in its own schema.
	Schema string
	// MaxConns is the pool size; 0 means 10.
	MaxConns int32
	// MaxValueBytes is the largest value accepted; 0 means
	// store.DefaultMaxValueBytes.
	MaxValueBytes int
	// MaxTxAttempts bounds how often one Commit restarts its transaction
	// after serialization failures; 0 means 50.
	MaxTxAttempts int
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxConns == 0 {
		c.MaxConns = 10
	}
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = store.DefaultMaxValueBytes
	}
	if c.MaxTxAttempts == 0 {
		c.MaxTxAttempts = 50
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.URL == "":
		return errors.New("sqlstore: a connection URL is required")
	case c.MaxConns < 1:
		return fmt.Errorf("sqlstore: pool size must be at least 1, got %d", c.MaxConns)
	case c.MaxValueBytes < 1:
		return fmt.Errorf("sqlstore: max value bytes must be positive, got %d", c.MaxValueBytes)
	case c.MaxTxAttempts < 1:
		return fmt.Errorf("sqlstore: max transaction attempts must be at least 1, got %d", c.MaxTxAttempts)
	}
	return nil
}

// Store is the SQL backend. Create it with Open.
type Store struct {
	caps    store.Capabilities
	cfg     Config
	pool    *pgxpool.Pool
	dialect Dialect
	locks   *keyLocks

	life   sync.RWMutex
	closed bool
}

var _ store.Store = (*Store)(nil)

// Open connects, detects the dialect and applies missing migrations.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: parse URL: %w", err)
	}
	pcfg.MaxConns = cfg.MaxConns
	if cfg.Schema != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: connect: %w", err)
	}
	s := &Store{cfg: cfg, pool: pool, locks: newKeyLocks()}
	if err := s.init(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	var version string
	if err := s.pool.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
		return fmt.Errorf("sqlstore: connect: %w", err)
	}
	s.dialect = PostgreSQL
	if strings.Contains(version, "CockroachDB") {
		s.dialect = CockroachDB
	}
	s.caps = store.Capabilities{
		Backend:          "sql/" + string(s.dialect),
		ConditionalBatch: true,
		AtomicBatch:      true,
		ReadAfterWrite:   true,
		ScanConsistency:  true,
		Durable:          true,
		MaxValueBytes:    s.cfg.MaxValueBytes,
	}
	return s.migrate(ctx)
}

// Dialect reports the detected database.
func (s *Store) Dialect() Dialect { return s.dialect }

// Capabilities implements store.Store.
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// enter guards an operation against Close; call the returned func when done.
func (s *Store) enter(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return nil, store.ErrClosed
	}
	return s.life.RUnlock, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, err
	}
	leave, err := s.enter(ctx)
	if err != nil {
		return store.Item{}, err
	}
	defer leave()
	item := store.Item{Key: append([]byte(nil), key...)}
	var version int64
	err = s.pool.QueryRow(ctx, "SELECT v, version FROM weft_kv WHERE k = $1", key).Scan(&item.Value, &version)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Item{}, store.NotFound(key)
	}
	if err != nil {
		return store.Item{}, translateRead(err)
	}
	item.Version = uint64(version)
	return item, nil
}

// Scan implements store.Store with one statement: one consistent snapshot.
func (s *Store) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	lower, upper, empty := p.Bounds()
	res := &store.ScanResult{}
	if empty {
		return res, nil
	}
	limit := p.EffectiveLimit()
	query, args := scanQuery(lower, upper, limit+1)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, translateRead(err)
	}
	items, err := pgx.CollectRows(rows, scanItem)
	if err != nil {
		return nil, translateRead(err)
	}
	if len(items) > limit {
		items = items[:limit]
		res.Next = append([]byte(nil), items[limit-1].Key...)
	}
	res.Items = items
	return res, nil
}

func scanQuery(lower, upper []byte, limit int) (string, []any) {
	if lower == nil {
		lower = []byte{}
	}
	if upper == nil {
		return "SELECT k, v, version FROM weft_kv WHERE k >= $1 ORDER BY k LIMIT $2", []any{lower, limit}
	}
	return "SELECT k, v, version FROM weft_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3", []any{lower, upper, limit}
}

func scanItem(row pgx.CollectableRow) (store.Item, error) {
	var item store.Item
	var version int64
	err := row.Scan(&item.Key, &item.Value, &version)
	item.Version = uint64(version)
	return item, err
}

// Commit implements store.Store.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if err := store.ValidateBatch(b, s.caps); err != nil {
		return nil, err
	}
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	plan := planBatch(b)
	recheck := plan.recheck(s.pool)
	if recheck != nil {
		unlock, err := s.lockConditions(ctx, plan.condKeys, recheck)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	var res *store.CommitResult
	err = s.runTx(ctx, func(tx pgx.Tx) error {
		var err error
		res, err = plan.exec(ctx, tx)
		return err
	}, recheck)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// lockConditions takes the in-process locks of the condition keys. When it
// had to wait (another batch on these keys just ran), it lets go and re-reads
// the conditions, in parallel with other waiters: a lost race then costs one
// read instead of a transaction and a serialization failure.
func (s *Store) lockConditions(ctx context.Context, keys [][]byte, recheck func(context.Context) error) (func(), error) {
	unlock, waited := s.locks.lock(keys)
	if !waited {
		return unlock, nil
	}
	unlock()
	if err := recheck(ctx); err != nil {
		return nil, err
	}
	unlock, _ = s.locks.lock(keys)
	return unlock, nil
}

// Close implements store.Store. It waits for operations in flight and is
// idempotent.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if !s.closed {
		s.closed = true
		s.pool.Close()
	}
	return nil
}
