package view

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// storeKinds are the backends the view tests run on.
var storeKinds = []string{"memory", "pebble", "postgresql"}

func openStore(t *testing.T, kind string) store.Store {
	t.Helper()
	switch kind {
	case "memory":
		st := memstore.New(memstore.Config{})
		t.Cleanup(func() { _ = st.Close() })
		return st
	case "pebble":
		st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	default:
		return sqltest.Open(t, sqltest.NewSchema(t))
	}
}

// eachStore runs f on a fresh Views over every backend.
func eachStore(t *testing.T, f func(t *testing.T, st store.Store, v *Views)) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, kind)
			f(t, st, New(st))
		})
	}
}

func TestViews_SaveByNameReplacesTheTenantsViewAndListsItForTheTenant(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, _ store.Store, v *Views) {
		ctx := context.Background()
		after := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
		failed := View{Name: "failed payments", Query: "status = FAILED and plan_id = payments",
			Filters: Filters{Statuses: []string{"RUN_STATUS_FAILED"}, PlanID: "payments", CreatedAfter: after, RunIDContains: "run-"}}
		saved, created, err := v.Save(ctx, "acme", failed, "alice")
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "alice", saved.SavedBy)
		require.False(t, saved.SavedAt.IsZero())

		again, created, err := v.Save(ctx, "acme", failed, "alice")
		require.NoError(t, err)
		require.False(t, created, "the same name again replaces the view")
		require.Equal(t, failed.Query, again.Query)

		changed := failed
		changed.Query = "status = FAILED"
		_, created, err = v.Save(ctx, "acme", changed, "bob")
		require.NoError(t, err)
		require.False(t, created)
		_, _, err = v.Save(ctx, "acme", View{Name: "all"}, "bob")
		require.NoError(t, err)
		_, _, err = v.Save(ctx, "beta", View{Name: "mine", Query: "plan_id = x"}, "carol")
		require.NoError(t, err)

		views, next, err := v.List(ctx, "acme", 0, "")
		require.NoError(t, err)
		require.Empty(t, next)
		require.Len(t, views, 2, "one view per name; another tenant's are not listed")
		require.Equal(t, "all", views[0].Name, "by name")
		got := views[1]
		require.Equal(t, "failed payments", got.Name)
		require.Equal(t, "status = FAILED", got.Query, "the last save wins")
		require.Equal(t, "bob", got.SavedBy)
		require.Equal(t, []string{"RUN_STATUS_FAILED"}, got.Filters.Statuses)
		require.Equal(t, "payments", got.Filters.PlanID)
		require.True(t, after.Equal(got.Filters.CreatedAfter))
		require.True(t, got.Filters.CreatedBefore.IsZero())
		require.Equal(t, "run-", got.Filters.RunIDContains)

		beta, _, err := v.List(ctx, "beta", 0, "")
		require.NoError(t, err)
		require.Len(t, beta, 1)
		require.Equal(t, "mine", beta[0].Name)
	})
}

func TestViews_DeleteRemovesOnlyThatViewAndAnUnknownNameIsNotFound(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, _ store.Store, v *Views) {
		ctx := context.Background()
		for _, name := range []string{"a", "b"} {
			_, _, err := v.Save(ctx, "acme", View{Name: name}, "alice")
			require.NoError(t, err)
		}
		_, _, err := v.Save(ctx, "beta", View{Name: "a"}, "bob")
		require.NoError(t, err)
		require.NoError(t, v.Delete(ctx, "acme", "a"))
		require.ErrorIs(t, v.Delete(ctx, "acme", "a"), ErrNotFound, "already deleted")
		require.ErrorIs(t, v.Delete(ctx, "acme", "never"), ErrNotFound)
		views, _, err := v.List(ctx, "acme", 0, "")
		require.NoError(t, err)
		require.Len(t, views, 1)
		require.Equal(t, "b", views[0].Name)
		beta, _, err := v.List(ctx, "beta", 0, "")
		require.NoError(t, err)
		require.Len(t, beta, 1, "another tenant's view of the same name stays")
	})
}

func TestViews_ListPagesByNameWithoutRepeatsOrGaps(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, _ store.Store, v *Views) {
		ctx := context.Background()
		// Names whose bytes sort around the key separator and its escape.
		names := []string{"a", "a b", "a:b", "a\\b", "ab", "b", "z", "ü"}
		for _, n := range names {
			_, _, err := v.Save(ctx, "acme", View{Name: n}, "alice")
			require.NoError(t, err)
		}
		_, _, err := v.Save(ctx, "acme2", View{Name: "other"}, "alice")
		require.NoError(t, err)
		var got []string
		token := ""
		for range len(names) + 1 {
			page, next, err := v.List(ctx, "acme", 3, token)
			require.NoError(t, err)
			for _, p := range page {
				got = append(got, p.Name)
			}
			if next == "" {
				break
			}
			token = next
		}
		require.ElementsMatch(t, names, got, "every view once, and none of acme2's")
		require.Len(t, got, len(names))
	})
}

func TestViews_ARecordOfANewerFormatIsRefusedNotMisread(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, v *Views) {
		ctx := context.Background()
		body, err := json.Marshal(map[string]any{"version": recordVersion + 1, "name": "future"})
		require.NoError(t, err)
		_, err = st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(keyspace.View.Key("acme", "future"), body)}})
		require.NoError(t, err)
		_, _, err = v.List(ctx, "acme", 0, "")
		require.ErrorContains(t, err, fmt.Sprintf("format version %d", recordVersion+1))
	})
}
