package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/store/memstore"
)

func TestLog_ListsNewestFirstWithinTheTimeBoundsAndSweepsOldRecords(t *testing.T) {
	st := memstore.New(memstore.Config{})
	t.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log := audit.New(st, func() time.Time { return now })
	ctx := context.Background()
	for i, who := range []string{"a", "b", "c", "d"} {
		now = now.Add(time.Hour)
		require.NoError(t, log.Append(ctx, audit.Record{Tenant: "acme", Principal: who, Outcome: "ok"}))
		if i == 0 {
			require.NoError(t, log.Append(ctx, audit.Record{Tenant: "beta", Principal: who, Outcome: "ok"}))
		}
	}
	principals := func(p audit.ListParams) []string {
		page, err := log.List(ctx, p)
		require.NoError(t, err)
		var out []string
		for _, r := range page.Records {
			out = append(out, r.Principal)
		}
		return out
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, []string{"d", "c", "b", "a"}, principals(audit.ListParams{Tenant: "acme", Limit: 10}))
	require.Equal(t, []string{"c", "b"}, principals(audit.ListParams{Tenant: "acme", Limit: 10,
		Filter: audit.Filter{Since: start.Add(2 * time.Hour), Until: start.Add(4 * time.Hour)}}))
	require.Equal(t, []string{"a"}, principals(audit.ListParams{Tenant: "beta", Limit: 10}))

	removed, err := log.Sweep(ctx, start.Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, 2, removed, "acme's a and beta's a")
	require.Equal(t, []string{"d", "c", "b"}, principals(audit.ListParams{Tenant: "acme", Limit: 10}))

	_, err = log.List(ctx, audit.ListParams{Tenant: "acme", Limit: 0})
	require.EqualError(t, err, "audit page size must be from 1 to 1000, got 0")
}
