// Package sqlstore is the SQL store.Store: CockroachDB through pgx v5, with
// transactions run by cockroach-go's retry helper (crdbpgxv5.ExecuteTx) at
// SERIALIZABLE isolation. The same SQL runs on PostgreSQL, which is what the
// tests here use; CockroachDB runs the same suite where COCKROACH_BINARY names
// a cockroach binary.
//
// Schema: one table, weft_kv(k BYTEA PRIMARY KEY, v BYTEA NOT NULL,
// version INT8 NOT NULL), and one sequence, weft_kv_version, created by the
// embedded migrations in migrations/ and recorded in weft_schema_migrations.
// Open applies the migrations that are missing; migrations are append-only
// and each runs once, in order, in its own transaction.
//
// Commit sends one pipelined round trip inside the transaction: lock and read
// the condition keys (SELECT … FOR UPDATE), delete, upsert with
// nextval('weft_kv_version') RETURNING the new versions. The conditions are
// checked in Go against the rows read before the writes, and a failed
// condition rolls the whole transaction back. Get and Scan are single
// statements, which read one consistent snapshot.
//
// Errors are translated once, here: SQLSTATE 40001 and 40P01 are retried (by
// the helper on CockroachDB, and by restarting the whole transaction on
// PostgreSQL, where a serialization failure dooms the transaction) and become
// store.ErrRetryable if they persist; 40003, an ambiguous RELEASE and a
// connection lost during COMMIT become *store.OutcomeUnknownError.
//
// Layering: imports store, pgx v5 and cockroach-go's crdb packages.
package sqlstore
