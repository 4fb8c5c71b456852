package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// proxied opens a store through a fault proxy, and one straight to the
// database on the same schema (to look at what really happened).
func proxied(t *testing.T, cfg sqlstore.Config) (*sqlstore.Store, *sqltest.Proxy, *sqlstore.Store) {
	t.Helper()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	direct := db.OpenConfig(t, sqlstore.Config{Schema: schema})
	proxy := sqltest.StartProxy(t, db.URL)
	cfg.URL, cfg.Schema = proxy.URL, schema
	s, err := sqlstore.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, proxy, direct
}

// paths are the ways a group commits: PostgreSQL's one round trip, its two
// (a hook after the reads forces them), and CockroachDB's path's one round
// trip (an implicit transaction) and two (savepoint retries).
var paths = []struct {
	name string
	cfg  sqlstore.Config
	two  bool
}{
	{"postgresql one trip", sqlstore.Config{}, false},
	{"postgresql two trips", sqlstore.Config{}, true},
	{"cockroachdb path one trip", sqlstore.Config{Path: sqlstore.CockroachDB}, false},
	{"cockroachdb path two trips", sqlstore.Config{Path: sqlstore.CockroachDB}, true},
}

func contains(part string) func(string) bool {
	return func(sql string) bool { return strings.Contains(sql, part) }
}

// readsConditions matches the statements that read a group's condition
// keys: the lock of two round trips, the checks of one.
func readsConditions(sql string) bool {
	return strings.Contains(sql, "FOR UPDATE") || strings.Contains(sql, "count(*) = 0")
}

func TestFaultProxy_RelaysEveryOperationUnchanged(t *testing.T) {
	t.Parallel()
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s, _, _ := proxied(t, p.cfg)
			if p.two {
				sqlstore.SetAfterReadHook(s, func(int, int) error { return nil })
			}
			exercise(t, s)
		})
	}
}

func TestFaultProxy_ACommitWhoseAnswerIsLostIsOutcomeUnknownNeverRetriedAndHappened(t *testing.T) {
	t.Parallel()
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s, proxy, direct := proxied(t, p.cfg)
			if p.two {
				sqlstore.SetAfterReadHook(s, func(int, int) error { return nil })
			}
			ctx := context.Background()
			batch := &store.Batch{Conditions: []store.Condition{store.IfAbsent([]byte("k"))}, Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}}
			proxy.DropAfterCommit(1)
			_, err := s.Commit(ctx, batch)
			require.ErrorIs(t, err, store.ErrOutcomeUnknown)
			require.NotErrorIs(t, err, store.ErrRetryable)
			require.Equal(t, 1, proxy.CommitsDropped(), "the COMMIT reached the server and committed before the connection dropped")
			require.Zero(t, s.Stats().Retries, "an ambiguous commit is never retried")

			it, err := direct.Get(ctx, []byte("k"))
			require.NoError(t, err, "the commit happened")
			require.Equal(t, "v", string(it.Value))
			// Resolving it as the engine does: the same batch again answers
			// that its condition no longer holds; nothing is written twice.
			_, err = s.Commit(ctx, batch)
			require.ErrorIs(t, err, store.ErrConditionFailed)
			again, err := direct.Get(ctx, []byte("k"))
			require.NoError(t, err)
			require.Equal(t, it.Version, again.Version)
		})
	}
}

func TestFaultProxy_AServerRaisedSerializationFailureIsRetriedAndCounted(t *testing.T) {
	t.Parallel()
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s, proxy, direct := proxied(t, p.cfg)
			if p.two {
				sqlstore.SetAfterReadHook(s, func(int, int) error { return nil })
			}
			ctx := context.Background()
			proxy.FailStatements(readsConditions, 2)
			_, err := s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent([]byte("k"))}, Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
			require.NoError(t, err)
			require.Zero(t, proxy.Armed(), "both failures were raised")
			require.EqualValues(t, 2, s.Stats().Retries)
			_, err = direct.Get(ctx, []byte("k"))
			require.NoError(t, err)
		})
	}
}

func TestFaultProxy_ReadsRunAgainAfterAServerRaisedSerializationFailure(t *testing.T) {
	t.Parallel()
	s, proxy, _ := proxied(t, sqlstore.Config{})
	ctx := context.Background()
	_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
	require.NoError(t, err)
	proxy.FailStatements(contains("FROM weft_kv WHERE k"), 2)
	it, err := s.Get(ctx, []byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(it.Value))
	require.EqualValues(t, 2, s.Stats().ReadRetries)
	proxy.FailStatements(contains("ORDER BY k LIMIT"), 1)
	res, err := s.Scan(ctx, &store.ScanParams{Prefix: []byte("k")})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	require.EqualValues(t, 3, s.Stats().ReadRetries)
}

func TestFaultProxy_ACommitStalledPastItsDeadlineIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	s, proxy, _ := proxied(t, sqlstore.Config{})
	proxy.StallStatements(contains("weft_kv"), 1, time.Second)
	// The deadline passes once the COMMIT was sent, while the proxy holds the
	// statement: a fixed timeout would be missed before the send on a loaded
	// machine, and that commit is rightly answered "never committed".
	ctx := newDeadline()
	sqlstore.SetAfterSendHook(s, func(context.Context, uint32) { ctx.pass() })
	_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
	require.ErrorIs(t, err, store.ErrOutcomeUnknown, "the whole pipeline, COMMIT included, was sent: the outcome is not the caller's to know")
}

// deadline is a context whose deadline passes when the test says (pass), not
// at a time: its Err is then context.DeadlineExceeded, as a timeout's is.
type deadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newDeadline() *deadline {
	return &deadline{Context: context.Background(), done: make(chan struct{})}
}

func (d *deadline) pass()                 { d.once.Do(func() { close(d.done) }) }
func (d *deadline) Done() <-chan struct{} { return d.done }

func (d *deadline) Err() error {
	select {
	case <-d.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
