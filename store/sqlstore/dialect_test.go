package sqlstore_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// unsupportedOnCockroachDB is what CockroachDB does not support (or
// supports in a way the store must not rely on), each with the reason. A
// statement the store sends to CockroachDB must match none.
var unsupportedOnCockroachDB = []struct {
	feature *regexp.Regexp
	reason  string
}{
	{regexp.MustCompile(`(?i)\bpg_(try_)?advisory`), "advisory locks: CockroachDB has none (use a lock row with a lease)"},
	{regexp.MustCompile(`(?i)\b(UN)?LISTEN\b|\bNOTIFY\b|pg_notify`), "LISTEN/NOTIFY: not supported"},
	{regexp.MustCompile(`(?i)\bTEMP(ORARY)?\s+(TABLE|SEQUENCE|VIEW)`), "temporary objects: experimental, off by default"},
	{regexp.MustCompile(`(?i)\bLOCK\s+TABLE\b`), "LOCK TABLE: not supported"},
	{regexp.MustCompile(`(?i)\b(xmin|xmax|ctid|oid)\b`), "PostgreSQL's system columns: none on CockroachDB"},
	{regexp.MustCompile(`(?i)\bCREATE\s+(OR\s+REPLACE\s+)?(TRIGGER|RULE)\b`), "triggers and rules: absent before v24.3, and a cost on every write"},
	{regexp.MustCompile(`(?i)\bDEFERRABLE\b`), "deferrable constraints: not supported"},
	{regexp.MustCompile(`(?i)\bVACUUM\b|\bCLUSTER\b`), "VACUUM/CLUSTER: not supported"},
	{regexp.MustCompile(`(?i)\bSET\s+(plan_cache_mode|enable_seqscan)\b`), "PostgreSQL's planner settings: sent to PostgreSQL only"},
	{regexp.MustCompile(`(?i)\bISOLATION\s+LEVEL\s+(READ|REPEATABLE)`), "weaker isolation: the store runs at SERIALIZABLE"},
	{regexp.MustCompile(`(?i)\bpg_catalog\b|\bpg_class\b|\bto_regclass\b`), "PostgreSQL's catalogs: CockroachDB emulates them partly"},
}

func TestDialect_NoStatementSentToCockroachDBUsesAFeatureItLacks(t *testing.T) {
	t.Parallel()
	stmts, err := sqlstore.Statements(sqlstore.CockroachDB, sqlstore.Config{})
	require.NoError(t, err)
	require.NotEmpty(t, stmts)
	for _, st := range stmts {
		for _, u := range unsupportedOnCockroachDB {
			require.False(t, u.feature.MatchString(st.SQL), "%s: %s\n%s", st.Name, u.reason, st.SQL)
		}
	}
	var upserts []string
	for _, st := range stmts {
		if strings.HasPrefix(st.SQL, "UPSERT") {
			upserts = append(upserts, st.Name)
		}
	}
	require.Equal(t, []string{"upsert"}, upserts, "CockroachDB writes whole rows with UPSERT, without a read first")
}

func TestDialect_TheDenyListCatchesWhatItNames(t *testing.T) {
	t.Parallel()
	for _, sql := range []string{"SELECT pg_advisory_lock(1)", "SELECT pg_try_advisory_xact_lock(7)", "LISTEN weft", "NOTIFY weft",
		"CREATE TEMP TABLE t (k INT8)", "CREATE TEMPORARY TABLE t (k INT8)", "LOCK TABLE weft_kv",
		"SELECT ctid FROM weft_kv", "SET plan_cache_mode = force_generic_plan", "BEGIN ISOLATION LEVEL READ COMMITTED"} {
		matched := false
		for _, u := range unsupportedOnCockroachDB {
			matched = matched || u.feature.MatchString(sql)
		}
		require.True(t, matched, sql)
	}
}

func TestDialect_EveryPostgreSQLStatementIsListedAndPrepares(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := db.Open(t, db.NewSchema(t))
	stmts, err := sqlstore.Statements(sqlstore.PostgreSQL, sqlstore.Config{})
	require.NoError(t, err)
	conn, err := sqlstore.Pool(s).Acquire(context.Background())
	require.NoError(t, err)
	defer conn.Release()
	for _, st := range stmts {
		if strings.Contains(st.SQL, ";") {
			continue // several statements (the session settings) do not prepare as one
		}
		_, err := conn.Conn().Prepare(context.Background(), "", st.SQL)
		require.NoError(t, err, "%s:\n%s", st.Name, st.SQL)
	}
}

// statementLog is a pgx tracer that records every statement a pool sends.
type statementLog struct {
	mu   sync.Mutex
	seen map[string]struct{}
	// batched counts the statements run in pipelines (not prepared).
	batched map[string]int
	// pipelines and queries count the round trips: pipelines sent, and
	// statements sent on their own.
	pipelines, queries int
}

// roundTrips answers the pipelines and single statements sent so far.
func (l *statementLog) roundTrips() (pipelines, queries int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pipelines, l.queries
}

func (l *statementLog) add(sql string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]struct{}{}
	}
	l.seen[sql] = struct{}{}
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.add(d.SQL)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries++
	return ctx
}
func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pipelines++
	return ctx
}
func (l *statementLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.add(d.SQL)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.batched == nil {
		l.batched = map[string]int{}
	}
	l.batched[d.SQL]++
}
func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
func (l *statementLog) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	l.add(d.SQL)
	return ctx
}
func (l *statementLog) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// exercise runs every kind of operation the store has: commits alone and in
// groups, with conditions that hold and fail, shared keys, deletes, reads.
func exercise(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	ctx := context.Background()
	k := func(s string) []byte { return []byte(s) }
	res, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(k("a"), k("1")), store.Put(k("b"), k("2"))}})
	require.NoError(t, err)
	_, err = s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfVersion(k("a"), res.Versions[0])},
		Ops: []store.Op{store.Delete(k("b")), store.Put(k("c"), k("3"))}})
	require.NoError(t, err)
	_, err = s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(k("a"))}, Ops: []store.Op{store.Put(k("a"), nil)}})
	require.ErrorIs(t, err, store.ErrConditionFailed)
	// Groups: disjoint (one trip on PostgreSQL), failing, sharing a key.
	_, errs := sqlstore.CommitGroup(s, []*store.Batch{
		{Ops: []store.Op{store.Put(k("d"), nil)}}, {Conditions: []store.Condition{store.IfPresent(k("e"))}, Ops: []store.Op{store.Put(k("f"), nil)}}})
	require.ErrorIs(t, errs[1], store.ErrConditionFailed)
	_, errs = sqlstore.CommitGroup(s, []*store.Batch{
		{Conditions: []store.Condition{store.IfAbsent(k("g"))}, Ops: []store.Op{store.Put(k("g"), nil)}},
		{Conditions: []store.Condition{store.IfAbsent(k("g"))}, Ops: []store.Op{store.Put(k("g"), nil), store.Delete(k("d"))}}})
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], store.ErrConditionFailed)
	_, errs = sqlstore.CommitGroup(s, []*store.Batch{{Conditions: []store.Condition{store.IfAbsent(k("a"))}}})
	require.ErrorIs(t, errs[0], store.ErrConditionFailed)
	_, err = s.Get(ctx, k("a"))
	require.NoError(t, err)
	_, err = s.GetMany(ctx, [][]byte{k("a"), k("c")})
	require.NoError(t, err)
	_, err = s.Scan(ctx, &store.ScanParams{Prefix: k("")})
	require.NoError(t, err)
	_, err = s.Scan(ctx, &store.ScanParams{Prefix: k("a")})
	require.NoError(t, err)
}

func TestDialect_TheStoreSendsNoStatementTheListLacks(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	for _, path := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.CockroachDB} {
		t.Run(string(path), func(t *testing.T) {
			t.Parallel()
			log := &statementLog{}
			cfg := sqlstore.Config{URL: db.URL, Schema: db.NewSchema(t), Path: path}
			s, err := sqlstore.Open(context.Background(), sqlstore.WithTracer(cfg, log))
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			exercise(t, s)
			listed, err := sqlstore.Statements(sqlstore.PostgreSQL, cfg)
			require.NoError(t, err)
			known := map[string]bool{}
			for _, st := range listed {
				known[st.SQL] = true
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			require.NotEmpty(t, log.seen)
			for sql := range log.seen {
				require.True(t, known[sql], "the store sent a statement sqlstore.Statements does not list:\n%s", sql)
			}
		})
	}
}

// The fault proxy's emulation of CockroachDB's sessions (the fence of a
// transaction in doubt, exercised on PostgreSQL) covers exactly the session
// statements the store sends to CockroachDB.
func TestDialect_TheProxyEmulatesEveryCockroachDBSessionStatement(t *testing.T) {
	t.Parallel()
	stmts, err := sqlstore.Statements(sqlstore.CockroachDB, sqlstore.Config{})
	require.NoError(t, err)
	var sessions []string
	for _, st := range stmts {
		if strings.Contains(strings.ToLower(st.SQL), "session") && st.Name != "session settings" {
			sessions = append(sessions, st.SQL)
		}
	}
	want := make([]string, 0, len(sqltest.CockroachSessionStatements))
	for sql := range sqltest.CockroachSessionStatements {
		want = append(want, sql)
	}
	require.ElementsMatch(t, want, sessions)
}
