// Package sqlstore is the SQL store.Store: CockroachDB through pgx v5, at
// SERIALIZABLE isolation. The same SQL runs on PostgreSQL, which is what the
// tests here use; CockroachDB runs the same suite where COCKROACH_BINARY names
// a cockroach binary.
//
// Schema: one table, weft_kv(k BYTEA PRIMARY KEY, v BYTEA NOT NULL,
// version INT8 NOT NULL) with fillfactor 85 (room on each page for the
// rewrites of its rows), and one sequence, weft_kv_version, created by the
// embedded migrations in migrations/ and recorded in weft_schema_migrations.
// Open applies the migrations that are missing (migrate.go) under the
// cluster's migration lock, a row with a lease in weft_schema_lock (lock.go;
// CockroachDB has no advisory locks): each statement in its own transaction,
// idempotent, and the migration's record written only after its statements
// ran. With Config.CheckSchemaOnly it applies none and refuses an incomplete
// schema, naming the missing migration. Migrations are append-only.
//
// Commit is a group commit (committer.go, group.go, grouptx.go, onetrip.go).
// Callers enqueue their batches; up to Config.MaxGroups leaders each take
// what is queued — never waiting for more — and commit it in one
// transaction. On PostgreSQL a group whose batches share no key first tries
// one round trip (onetrip.go): BEGIN, a SELECT … FOR UPDATE of the condition
// keys that raises an error when a condition fails, one DELETE, one upsert
// that draws and answers the versions, and COMMIT, pipelined; every batch
// commits, or a failed condition aborts it before any write and the same
// attempt decides the group batch by batch. Batch by batch is:
// SELECT … ORDER BY k FOR UPDATE of every condition key and nextval of one
// version per put (one round trip), then, in Go, each batch's conditions in
// arrival order against the rows read and the writes of the batches accepted
// before it, then one DELETE and one multi-row upsert of what the accepted
// batches leave behind, and COMMIT (a second round trip). Each caller gets
// its own answer: its versions, its own *store.ConditionFailedError, or, for
// a commit whose outcome is unknown, *store.OutcomeUnknownError (every batch
// of that group). Groups in flight at once never share a key. The one-round-
// trip path reuses its buffers from group to group, encodes its arrays once
// in PostgreSQL's binary array format (onetrip.go, arrays.go) and hands them
// to pgconn's pipeline itself, with statements it prepares once per
// connection: the same messages pgx.Batch would send, encoded in room the
// connection keeps for them (sendroom.go). A batch that finds the store idle
// is committed at once on its caller's goroutine. Every batch is copied
// when it is submitted (its caller may reuse its memory once Commit
// returns, even while its group still commits), into memory the store
// recycles once both the caller has its answer and the leader has finished
// with the batch (requestmem.go). Get and Scan are single statements, which
// read one consistent snapshot.
//
// One group is in flight at a time on PostgreSQL by default: its
// SERIALIZABLE tracks reads by B-tree page, so concurrent groups on
// neighbouring keys fail each other although they share none.
//
// On PostgreSQL a group's transaction is pipelined as above (in one round
// trip, or BEGIN with the reads and COMMIT with the writes). On CockroachDB
// it runs as CockroachDB retries a transaction in place (groupcrdb.go), in
// two round trips: BEGIN, SAVEPOINT cockroach_restart and the reads, then
// the writes (UPSERT), RELEASE (the commit) and COMMIT. Config.Path forces
// that path onto PostgreSQL (tests). statements.go and Statements list every
// statement the store sends.
//
// Errors are translated once, here: SQLSTATE 40001 and 40P01, and a failure
// before anything was sent, restart the group (in place on CockroachDB, at
// most a few times, then from BEGIN, after a read outside any transaction
// that answers the batches whose conditions no longer hold), with jittered
// backoff; every attempt counts against Config.MaxTxAttempts and every retry
// in Stats.Retries, and a failure that persists becomes store.ErrRetryable.
// 40003, a failed RELEASE on CockroachDB and a connection lost once COMMIT
// was sent become *store.OutcomeUnknownError, never retried. Reads run again
// after the same failures, at most Config.MaxReadAttempts times (counted in
// Stats.ReadRetries).
//
// A transaction whose COMMIT was sent on PostgreSQL and whose answer was
// never read is in doubt: the server may still commit it. Its keys stay held
// until its backend has ended (indoubt.go), so every later batch on them is
// ordered after it.
//
// Layering: imports store and pgx v5.
package sqlstore
