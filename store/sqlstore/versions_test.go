package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

// Versions need no global sequence: each store draws them from its own
// clock. A compare-and-set still writes a version above the one it held,
// whichever store wrote that and however far behind its own clock is; the
// two stores' versions never meet; and a key deleted and written again
// gets a version it never had.
func TestVersions_ACompareAndSetAcrossStoresWritesAGreaterVersionWhateverTheClocks(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	for _, path := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.CockroachDB} {
		t.Run(string(path), func(t *testing.T) {
			t.Parallel()
			schema := db.NewSchema(t)
			ahead := db.OpenOnPath(t, schema, string(path))
			behind := db.OpenOnPath(t, schema, string(path))
			sqlstore.SetVersionClock(ahead, func() time.Time { return time.Now().Add(time.Hour) })
			sqlstore.SetVersionClock(behind, func() time.Time { return time.Now().Add(-time.Hour) })
			ctx := context.Background()
			key := []byte("wf:run:ckpt")
			res, err := ahead.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(key)}, Ops: []store.Op{store.Put(key, []byte("0"))}})
			require.NoError(t, err)
			held, seen := res.Versions[0], map[uint64]bool{res.Versions[0]: true}
			nodes := map[uint64]bool{}
			for i := range 20 {
				s := []*sqlstore.Store{behind, ahead}[i%2]
				res, err := s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfVersion(key, held)},
					Ops: []store.Op{store.Put(key, []byte{byte(i)})}})
				require.NoError(t, err, "step %d", i)
				v := res.Versions[0]
				require.Greater(t, v, held, "step %d: a compare-and-set writes a greater version", i)
				require.False(t, seen[v])
				seen[v], held = true, v
				nodes[v&(1<<sqlstore.NodeBits-1)] = true
			}
			require.Len(t, nodes, 2, "each store's versions carry its own node")
			// Deleted, then written again by the store whose clock is behind:
			// a version the key never had, so an old compare-and-set fails.
			_, err = ahead.Commit(ctx, &store.Batch{Ops: []store.Op{store.Delete(key)}})
			require.NoError(t, err)
			res, err = behind.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(key)}, Ops: []store.Op{store.Put(key, []byte("again"))}})
			require.NoError(t, err)
			require.False(t, seen[res.Versions[0]], "a re-created key's version is new")
			for v := range seen {
				_, err := ahead.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfVersion(key, v)}, Ops: []store.Op{store.Put(key, nil)}})
				require.ErrorIs(t, err, store.ErrConditionFailed, "no ABA: version %d was the old key's", v)
			}
		})
	}
}

// A database written before migration 0003 holds versions the sequence
// drew; a store of this version conditions on them and writes greater
// ones.
func TestVersions_ARowWrittenWithASequenceVersionIsOvertaken(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	s := db.Open(t, schema)
	ctx := context.Background()
	var old int64
	require.NoError(t, sqlstore.Pool(s).QueryRow(ctx,
		"INSERT INTO weft_kv (k, v, version) VALUES ('k', 'v', nextval('weft_kv_version')) RETURNING version").Scan(&old))
	res, err := s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfVersion([]byte("k"), uint64(old))},
		Ops: []store.Op{store.Put([]byte("k"), []byte("w"))}})
	require.NoError(t, err)
	require.Greater(t, res.Versions[0], uint64(old))
	it, err := s.Get(ctx, []byte("k"))
	require.NoError(t, err)
	require.Equal(t, res.Versions[0], it.Version)
}

// Every store opened on a database draws its own node number: the only
// write a store makes to a shared row is that one draw, when it opens.
func TestVersions_EachStoreOpenedDrawsANewNode(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	nodes := map[uint64]bool{}
	for i := range 5 {
		s := db.Open(t, schema)
		res, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put([]byte{byte(i)}, nil)}})
		require.NoError(t, err)
		nodes[res.Versions[0]&(1<<sqlstore.NodeBits-1)] = true
	}
	require.Len(t, nodes, 5)
}
