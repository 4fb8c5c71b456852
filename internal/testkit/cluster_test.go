package testkit

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// With WEFT_TEST_SQL_PROXY set, the URL weftd processes are given reaches
// the test database through a fault proxy of the test's own, in the
// schema asked for.
func TestSchemaURL_ReachesTheDatabaseThroughAProxyWhenAsked(t *testing.T) {
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	direct, err := url.Parse(sqltest.URL())
	require.NoError(t, err)
	for _, proxied := range []bool{false, true} {
		if proxied {
			t.Setenv("WEFT_TEST_SQL_PROXY", "1")
		}
		u, err := url.Parse(SchemaURL(t, schema))
		require.NoError(t, err)
		require.Equal(t, proxied, u.Host != direct.Host, "through a proxy: %v (%s)", proxied, u.Host)
		conn, err := pgx.Connect(context.Background(), u.String())
		require.NoError(t, err)
		var path string
		require.NoError(t, conn.QueryRow(context.Background(), "SHOW search_path").Scan(&path))
		require.Equal(t, schema, path)
		require.NoError(t, conn.Close(context.Background()))
	}
}
