package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// MaxConns is the pool size; 0 means the URL's pool_max_conns, or 10
	// when the URL sets none.
	MaxConns int32
	// MaxValueBytes is the largest value accepted; 0 means
	// store.DefaultMaxValueBytes.
	MaxValueBytes int
	// MaxTxAttempts bounds how often one group's transaction restarts after
	// serialization failures; 0 means 50.
	MaxTxAttempts int
	// MaxGroups is how many group transactions may be in flight at once.
	// 0 means 1 on PostgreSQL and a quarter of MaxConns (at least 1) on
	// CockroachDB; the rest of the pool serves Get and Scan. PostgreSQL's
	// SERIALIZABLE locks what a transaction reads by index page, so
	// concurrent groups on neighbouring keys fail each other with
	// serialization failures although they share no key (see
	// docs/performance.md, "Group commit (SQL)").
	MaxGroups int
	// MaxGroupBatches bounds how many batches one group commits; 0 means 128.
	// 1 commits every batch in a transaction of its own.
	MaxGroupBatches int
	// MaxGroupBytes bounds the key and value bytes of one group; 0 means
	// 8 MiB. A batch larger than the bound is committed alone.
	MaxGroupBytes int
	// IdleInTransactionTimeout ends a session of the pool that stays idle
	// inside a transaction longer than this (PostgreSQL's
	// idle_in_transaction_session_timeout); 0 means one minute, negative
	// leaves the database's setting. The store never idles inside a
	// transaction for more than a round trip, but a session that did (a hung
	// process) would pin the predicate locks of every SERIALIZABLE
	// transaction committed since, until PostgreSQL's table of them fills
	// and every client fails with "out of shared memory".
	IdleInTransactionTimeout time.Duration
	// StatementTimeout ends any statement of the store that runs longer
	// (statement_timeout, on both databases); 0 means 30s, negative leaves
	// the database's setting. Migrations run under it too.
	StatementTimeout time.Duration
	// Path forces the code path of a dialect; empty means the detected
	// database's. CockroachDB on a PostgreSQL runs CockroachDB's path against
	// PostgreSQL: SERIALIZABLE sessions (reads included), transactions
	// retried in place through a savepoint, no one-round-trip pipeline. Only
	// the spelling of statements PostgreSQL lacks stays PostgreSQL's (UPSERT
	// is INSERT … ON CONFLICT there). Tests use it; PostgreSQL on a
	// CockroachDB is refused.
	Path Dialect
	// MaxReadAttempts bounds how often Get, GetMany and Scan run after a
	// serialization failure (a large read on CockroachDB can meet one) or a
	// connection that failed before the read was sent; 0 means 5.
	MaxReadAttempts int
	// CheckSchemaOnly makes Open apply no migration: it only checks that
	// every migration this store needs is recorded, and fails with
	// *SchemaIncompleteError naming the missing ones otherwise.
	CheckSchemaOnly bool
	// MigrationLease is how long the cluster's migration lock stays held
	// without renewal (its holder renews it every third of it); a process
	// that dies while migrating blocks the others that long. 0 means 30s.
	MigrationLease time.Duration
	// MigrationLockWait bounds how long Open waits for another process's
	// migration lock before failing with *SchemaIncompleteError; 0 means
	// five minutes.
	MigrationLockWait time.Duration

	// fence, set by tests only, chooses the dialect whose way a session in
	// doubt is ended (indoubt.go); empty means the detected database's.
	fence Dialect
	// tracer, set by tests only, sees every statement the pool sends.
	tracer pgx.QueryTracer
	// migrationHook, set by tests only, runs at each point of a migration
	// run; an error from it ends the run there.
	migrationHook func(MigrationPoint) error
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = store.DefaultMaxValueBytes
	}
	if c.MaxTxAttempts == 0 {
		c.MaxTxAttempts = 50
	}
	if c.MaxGroupBatches == 0 {
		c.MaxGroupBatches = 128
	}
	if c.MaxGroupBytes == 0 {
		c.MaxGroupBytes = 8 << 20
	}
	if c.IdleInTransactionTimeout == 0 {
		c.IdleInTransactionTimeout = time.Minute
	}
	if c.StatementTimeout == 0 {
		c.StatementTimeout = 30 * time.Second
	}
	if c.MaxReadAttempts == 0 {
		c.MaxReadAttempts = 5
	}
	if c.MigrationLease == 0 {
		c.MigrationLease = 30 * time.Second
	}
	if c.MigrationLockWait == 0 {
		c.MigrationLockWait = 5 * time.Minute
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.URL == "":
		return errors.New("sqlstore: a connection URL is required")
	case c.MaxConns < 0:
		return fmt.Errorf("sqlstore: pool size must be at least 1 (or 0 for the URL's pool_max_conns), got %d", c.MaxConns)
	case c.MaxValueBytes < 1:
		return fmt.Errorf("sqlstore: max value bytes must be positive, got %d", c.MaxValueBytes)
	case c.MaxTxAttempts < 1:
		return fmt.Errorf("sqlstore: max transaction attempts must be at least 1, got %d", c.MaxTxAttempts)
	case c.MaxGroups < 0 || (c.MaxConns > 0 && c.MaxGroups > int(c.MaxConns)):
		return fmt.Errorf("sqlstore: groups in flight must be between 1 and the pool size %d (or 0 for the default), got %d", c.MaxConns, c.MaxGroups)
	case c.MaxGroupBatches < 1:
		return fmt.Errorf("sqlstore: batches per group must be at least 1, got %d", c.MaxGroupBatches)
	case c.MaxGroupBytes < 1:
		return fmt.Errorf("sqlstore: group bytes must be positive, got %d", c.MaxGroupBytes)
	case c.IdleInTransactionTimeout > 0 && c.IdleInTransactionTimeout < time.Millisecond:
		return fmt.Errorf("sqlstore: idle-in-transaction timeout must be at least 1ms, got %s", c.IdleInTransactionTimeout)
	case c.StatementTimeout > 0 && c.StatementTimeout < time.Millisecond:
		return fmt.Errorf("sqlstore: statement timeout must be at least 1ms, got %s", c.StatementTimeout)
	case c.Path != "" && c.Path != PostgreSQL && c.Path != CockroachDB:
		return fmt.Errorf("sqlstore: path must be %q, %q or empty, got %q", PostgreSQL, CockroachDB, c.Path)
	case c.MaxReadAttempts < 1:
		return fmt.Errorf("sqlstore: max read attempts must be at least 1, got %d", c.MaxReadAttempts)
	case c.MigrationLease < 30*time.Millisecond:
		return fmt.Errorf("sqlstore: migration lease must be at least 30ms, got %s", c.MigrationLease)
	case c.MigrationLockWait < 0:
		return fmt.Errorf("sqlstore: migration lock wait must not be negative, got %s", c.MigrationLockWait)
	}
	return nil
}

// configureSession sets, on each new connection, the session settings
// (sessionSQL) of the database it reaches — CockroachDB announces itself
// with a crdb_version parameter — and, on CockroachDB, reads the session's
// id, which names it should a transaction of it be left in doubt
// (indoubt.go).
func (c Config) configureSession(ctx context.Context, conn *pgx.Conn) error {
	server := PostgreSQL
	if conn.PgConn().ParameterStatus("crdb_version") != "" {
		server = CockroachDB
	}
	if set := c.sessionSQL(server); set != "" {
		if _, err := conn.Exec(ctx, set); err != nil {
			return err
		}
	}
	if server != CockroachDB && c.fence != CockroachDB {
		return nil
	}
	var id string
	if err := conn.QueryRow(ctx, sessionIDSQL).Scan(&id); err != nil {
		return fmt.Errorf("sqlstore: read the session id: %w", err)
	}
	conn.PgConn().CustomData()[sessionIDKey] = id
	return nil
}

// Store is the SQL backend. Create it with Open.
type Store struct {
	caps store.Capabilities
	cfg  Config
	pool *pgxpool.Pool
	// dialect is the code path (Config.Path, or the database's); server is
	// the database detected, whose spelling of statements the store uses.
	dialect, server Dialect
	// fence is the dialect whose way a session in doubt is ended: the
	// database's (Config's fence in tests).
	fence  Dialect
	clock  *versionClock // hands out the versions of puts (versions.go)
	groups *committer
	mems   requestMems // the memory of requests' copies of their batches
	stats  groupStats
	hooks  hooks

	// life guards the pool against Close: operations enter it.
	life store.CloseGuard
	// closing ends when Close begins: what waits for a transaction in doubt
	// to end (endSession) stops then.
	closing     context.Context
	stopClosing context.CancelFunc
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
	if cfg.MaxConns == 0 {
		cfg.MaxConns = defaultMaxConns
		if urlSetsMaxConns(cfg.URL) {
			cfg.MaxConns = pcfg.MaxConns
		}
	}
	if cfg.MaxGroups > int(cfg.MaxConns) {
		return nil, fmt.Errorf("sqlstore: groups in flight must be between 1 and the pool size %d (or 0 for the default), got %d", cfg.MaxConns, cfg.MaxGroups)
	}
	pcfg.MaxConns = cfg.MaxConns
	if cfg.Schema != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	}
	pcfg.AfterConnect = cfg.configureSession
	if cfg.tracer != nil {
		pcfg.ConnConfig.Tracer = cfg.tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: connect: %w", err)
	}
	s := &Store{cfg: cfg, pool: pool}
	s.closing, s.stopClosing = context.WithCancel(context.Background())
	if err := s.init(ctx); err != nil {
		s.stopClosing()
		pool.Close()
		return nil, err
	}
	if s.cfg.MaxGroups == 0 {
		s.cfg.MaxGroups = defaultGroups(s.server, s.cfg.MaxConns)
	}
	s.groups = newCommitter(s.cfg, s.commitGroup)
	return s, nil
}

// defaultMaxConns is the pool size when neither Config.MaxConns nor the
// URL's pool_max_conns sets one.
const defaultMaxConns = 10

// urlSetsMaxConns reports whether the connection string, a URL or
// key=value pairs, sets pool_max_conns.
func urlSetsMaxConns(conn string) bool {
	if u, err := url.Parse(conn); err == nil && u.Scheme != "" {
		return u.Query().Has("pool_max_conns")
	}
	for _, field := range strings.Fields(conn) {
		if key, _, ok := strings.Cut(field, "="); ok && strings.TrimSpace(key) == "pool_max_conns" {
			return true
		}
	}
	return false
}

// defaultGroups is Config.MaxGroups's default for the dialect.
func defaultGroups(d Dialect, conns int32) int {
	if d == PostgreSQL {
		return 1
	}
	return max(1, int(conns)/4)
}

// minPostgreSQL is the oldest PostgreSQL the store runs on: the first with
// MERGE (upsertSQL). Older ones are past their end of life.
const minPostgreSQL = 15

// checkPostgreSQLVersion refuses a PostgreSQL older than minPostgreSQL, by
// the major version its version() text begins with ("PostgreSQL 15.19 …").
func checkPostgreSQLVersion(server Dialect, version string) error {
	if server != PostgreSQL {
		return nil
	}
	rest, ok := strings.CutPrefix(version, "PostgreSQL ")
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	major, err := strconv.Atoi(rest[:digits])
	if !ok || err != nil {
		return fmt.Errorf("sqlstore: the server's version is not PostgreSQL's form (%.40q)", version)
	}
	if major < minPostgreSQL {
		return fmt.Errorf("sqlstore: PostgreSQL %d or later is required, the server is PostgreSQL %d", minPostgreSQL, major)
	}
	return nil
}

func (s *Store) init(ctx context.Context) error {
	var version string
	if err := s.pool.QueryRow(ctx, versionSQL).Scan(&version); err != nil {
		return fmt.Errorf("sqlstore: connect: %w", err)
	}
	s.server = PostgreSQL
	if strings.Contains(version, "CockroachDB") {
		s.server = CockroachDB
	}
	if err := checkPostgreSQLVersion(s.server, version); err != nil {
		return err
	}
	s.dialect = s.server
	backend := "sql/" + string(s.server)
	switch {
	case s.cfg.Path == PostgreSQL && s.server == CockroachDB:
		return errors.New("sqlstore: the PostgreSQL path cannot run on CockroachDB")
	case s.cfg.Path == CockroachDB && s.server == PostgreSQL:
		s.dialect = CockroachDB
		backend += "+cockroachdb-path"
	}
	s.fence = s.server
	if s.cfg.fence != "" {
		s.fence = s.cfg.fence
	}
	s.caps = store.Capabilities{
		Backend:          backend,
		ConditionalBatch: true,
		AtomicBatch:      true,
		ReadAfterWrite:   true,
		ScanConsistency:  true,
		Durable:          true,
		MaxValueBytes:    s.cfg.MaxValueBytes,
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	node, err := s.drawNode(ctx)
	if err != nil {
		return err
	}
	s.clock = newVersionClock(node, time.Now)
	return nil
}

// Dialect reports the code path: the detected database's, or Config.Path.
func (s *Store) Dialect() Dialect { return s.dialect }

// Server reports the detected database.
func (s *Store) Server() Dialect { return s.server }

// Capabilities implements store.Store.
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, err
	}
	if err := s.life.Enter(ctx); err != nil {
		return store.Item{}, err
	}
	defer s.life.Leave()
	item := store.Item{Key: append([]byte(nil), key...)}
	var version int64
	err := s.read(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, getSQL, key).Scan(&item.Value, &version)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Item{}, store.NotFound(key)
	}
	if err != nil {
		return store.Item{}, err
	}
	item.Version = uint64(version)
	return item, nil
}

// GetMany implements store.MultiGetter with one statement: one round trip
// and one consistent snapshot, however many keys.
func (s *Store) GetMany(ctx context.Context, keys [][]byte) ([]store.Item, error) {
	for _, k := range keys {
		if err := store.ValidateKey(k); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if err := s.life.Enter(ctx); err != nil {
		return nil, err
	}
	defer s.life.Leave()
	var found map[string]store.Item
	err := s.read(ctx, func(ctx context.Context) error {
		var err error
		found, err = s.getMany(ctx, keys)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.Item, 0, len(found))
	for _, k := range keys {
		if it, ok := found[string(k)]; ok {
			out = append(out, it)
		}
	}
	return out, nil
}

// getMany is one attempt of GetMany.
func (s *Store) getMany(ctx context.Context, keys [][]byte) (map[string]store.Item, error) {
	rows, err := s.pool.Query(ctx, getManySQL, byteaArray(keys))
	if err != nil {
		return nil, err
	}
	found := make(map[string]store.Item, len(keys))
	for rows.Next() {
		var it store.Item
		var version int64
		if err := rows.Scan(&it.Key, &it.Value, &version); err != nil {
			rows.Close()
			return nil, err
		}
		it.Version = uint64(version)
		found[string(it.Key)] = it
	}
	return found, rows.Err()
}

// Scan implements store.Store with one statement: one consistent snapshot.
func (s *Store) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := s.life.Enter(ctx); err != nil {
		return nil, err
	}
	defer s.life.Leave()
	lower, upper, empty := p.Bounds()
	res := &store.ScanResult{}
	if empty {
		return res, nil
	}
	limit := p.EffectiveLimit()
	query, args := scanQuery(lower, upper, limit+1)
	var items []store.Item
	err := s.read(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, query, args...)
		if err == nil {
			items, err = pgx.CollectRows(rows, scanItem)
		}
		return err
	})
	if err != nil {
		return nil, err
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
		return scanFromSQL, []any{lower, limit}
	}
	return scanRangeSQL, []any{lower, upper, limit}
}

func scanItem(row pgx.CollectableRow) (store.Item, error) {
	var item store.Item
	var version int64
	err := row.Scan(&item.Key, &item.Value, &version)
	item.Version = uint64(version)
	return item, err
}

// Commit implements store.Store. The batch joins the group commit queue
// (committer): it is committed in one transaction with the batches of other
// callers, each decided on its own. Ending ctx while the batch is queued
// withdraws it (nothing is written); ending it while its group commits
// answers *store.OutcomeUnknownError, and the batch's keys stay held until
// its transaction has ended at the database (indoubt.go), so that every
// later batch on them is committed after it. A batch that finds the store
// idle is committed at once on the caller's goroutine and context.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if err := store.ValidateBatch(b, s.caps); err != nil {
		return nil, err
	}
	if err := s.life.Enter(ctx); err != nil {
		return nil, err
	}
	defer s.life.Leave()
	r := newRequest(ctx, b, &s.mems)
	defer r.letGo() // after the outcome is read, which holds none of the request's memory
	if s.groups.submit(r) {
		// Alone: a group of one, on the caller's context (nothing else rides
		// on it). A transaction left in doubt when ctx ends is ended in the
		// background, its keys held until then, while the caller has its
		// answer at once.
		if ref, inDoubt := s.commitGroupCtx(ctx, []*request{r}, true); inDoubt {
			held := slices.Clone(r.keys) // r's memory is recycled once Commit returns
			go func() {
				s.endSession(ref)
				s.groups.finishSolo(held)
			}()
		} else {
			s.groups.finishSolo(r.keys)
		}
		<-r.done
		return r.out.res, r.out.err
	}
	return r.wait(ctx, s.groups)
}

// Stats counts the group committer's work since Open.
type Stats struct {
	// Groups is how many group transactions ran (each perhaps retried).
	Groups uint64
	// Batches is how many batches they committed or decided.
	Batches uint64
	// Retries is how often a group's transaction restarted after a
	// serialization failure or deadlock, from BEGIN or in place (through
	// CockroachDB's savepoint), or after a failure before anything was sent.
	Retries uint64
	// Rechecks is how often the condition keys of a group were read outside
	// any transaction (after a serialization failure, or before a group
	// with a batch that waited behind another on a shared key).
	Rechecks uint64
	// Splits is how often a failed group was split into batches committed
	// one by one.
	Splits uint64
	// LargestGroup is the most batches one group held.
	LargestGroup int
	// ReadRetries is how often a Get, GetMany or Scan ran again after a
	// serialization failure or a connection that failed before it was sent.
	ReadRetries uint64
	// OneRoundTrip is how many group transactions committed in one round
	// trip (no two batches sharing a key, every condition holding).
	OneRoundTrip uint64
	// Fallbacks is how often a one-round-trip attempt found a condition
	// that does not hold: one read then answered the batches whose
	// conditions fail, and the rest were decided batch by batch in two
	// round trips (each such read is counted in Rechecks too).
	Fallbacks uint64
	// InDoubt is how many group transactions were left in doubt (COMMIT
	// sent, no answer read) and ended at the database before their keys
	// were let go.
	InDoubt uint64
}

// Stats answers the group committer's counters.
func (s *Store) Stats() Stats {
	return Stats{Groups: s.stats.groups.Load(), Batches: s.stats.batches.Load(), Retries: s.stats.retries.Load(),
		Rechecks: s.stats.rechecks.Load(), Splits: s.stats.splits.Load(), LargestGroup: int(s.stats.largest.Load()),
		OneRoundTrip: s.stats.oneTrip.Load(), Fallbacks: s.stats.fallbacks.Load(), ReadRetries: s.stats.readRetries.Load(),
		InDoubt: s.stats.inDoubt.Load()}
}

// ReadRetries answers Stats().ReadRetries (weftd serves it on /metrics).
func (s *Store) ReadRetries() uint64 { return s.stats.readRetries.Load() }

// GroupStats implements store.GroupCommitter.
func (s *Store) GroupStats() store.GroupStats {
	return store.GroupStats{Groups: s.stats.groups.Load(), Batches: s.stats.batches.Load(), Retries: s.stats.retries.Load()}
}

// Close implements store.Store. It waits for operations in flight and is
// idempotent.
func (s *Store) Close() error {
	return s.life.Close(func() error {
		s.stopClosing()
		s.groups.wait() // groups whose callers gave up may still be committing
		s.pool.Close()
		return nil
	})
}
