package testkit

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// ClusterFlags answers the weftd flags of a deployment of the test's own:
// the test PostgreSQL in a schema of its own (--store), the test Redis
// (WEFT_TEST_REDIS_URL, its DB number too) for leases and the event bus,
// and a key prefix of its own (--redis-prefix), so that tests running
// together share no lease, stream or row.
func ClusterFlags(t testing.TB, db *sqltest.DB) []string {
	t.Helper()
	prefix := redistest.Prefix(t, redistest.Require(t))
	return []string{"--store", SchemaURL(t, db.NewSchema(t)), "--redis", redistest.URL(), "--bus", redistest.URL(),
		"--redis-prefix", prefix}
}

// SchemaURL answers the test database's URL with search_path set to schema.
func SchemaURL(t testing.TB, schema string) string {
	t.Helper()
	u, err := url.Parse(sqltest.URL())
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
