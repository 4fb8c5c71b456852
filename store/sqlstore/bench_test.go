package sqlstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
)

const rawTableSQL = "CREATE TABLE raw_commit (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)"

// rawInsert commits one single-row INSERT through pgx, in its own implicit
// transaction: the database's own commit cost, the ceiling for the store.
func rawInsert(ctx context.Context, db *database, schema string, i int, value []byte) error {
	table := pgx.Identifier{schema, "raw_commit"}.Sanitize()
	_, err := db.Admin.Exec(ctx, "INSERT INTO "+table+" (k, v) VALUES ($1, $2)", []byte(strconv.Itoa(i)), value)
	return err
}

func rawSchema(b *testing.B, db *database) string {
	schema := db.NewSchema(b)
	if _, err := db.Admin.Exec(b.Context(), "SET search_path TO "+pgx.Identifier{schema}.Sanitize()+"; "+rawTableSQL); err != nil {
		b.Fatal(err)
	}
	return schema
}

// rawInsertBaseline prepares raw single-row INSERT commits.
func rawInsertBaseline(db *database) storetest.Baseline {
	return func(b *testing.B) func(int) error {
		schema := rawSchema(b, db)
		value := make([]byte, storetest.BenchValueBytes)
		return func(i int) error { return rawInsert(b.Context(), db, schema, i, value) }
	}
}

func BenchmarkStore_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	storetest.Bench(b, func(t testing.TB) store.Store { return db.Open(t, db.NewSchema(t)) }, rawInsertBaseline(db))
}

func BenchmarkRawInsertCommit_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	schema := rawSchema(b, db)
	value := make([]byte, storetest.BenchValueBytes)
	i := 0
	for b.Loop() {
		if err := rawInsert(b.Context(), db, schema, i, value); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
