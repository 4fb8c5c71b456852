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
// With WEFT_TEST_SQL_PROXY set (sqltest.ThroughProxy) it is the URL of a
// fault proxy of the test's own in front of the database, relaying every
// message unchanged: the weftd processes given it reach the database through
// the proxy, as the stores tests open in process do.
func SchemaURL(t testing.TB, schema string) string {
	t.Helper()
	db := sqltest.URL()
	if sqltest.ThroughProxy() {
		db = sqltest.StartProxy(t, db).URL
	}
	u, err := url.Parse(db)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
