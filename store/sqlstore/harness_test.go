package sqlstore_test

import (
	"testing"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// database is one server the suite runs on (see sqltest.DB).
type database = sqltest.DB

// requirePostgres returns the local PostgreSQL, or skips loudly when it is not
// reachable — and fails instead when CI is set.
func requirePostgres(t testing.TB) *database { return sqltest.Require(t) }

// connect opens a database at url (a CockroachDB test server's, say).
func connect(url string) (*database, error) { return sqltest.Connect(url) }

// harness isolates each conformance test in its own schema.
func harness(d *database) storetest.Harness {
	return storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		schema := d.NewSchema(t)
		return &storetest.Instance{
			Store:  d.Open(t, schema),
			Reopen: func(t testing.TB) store.Store { return d.Open(t, schema) },
			Peer:   func(t testing.TB) store.Store { return d.Open(t, schema) },
		}
	}}
}
