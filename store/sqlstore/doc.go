// Package sqlstore is the SQL store.Store: CockroachDB through pgx v5, at
// SERIALIZABLE isolation. The same SQL runs on PostgreSQL, which is what the
// tests here use; CockroachDB runs the same suite where COCKROACH_BINARY names
// a cockroach binary.
//
// Schema: one table, weft_kv(k BYTEA PRIMARY KEY, v BYTEA NOT NULL,
// version INT8 NOT NULL) with fillfactor 85 (room on each page for the
// rewrites of its rows), and one sequence, weft_kv_version, created by the
// embedded migrations in migrations/ and recorded in weft_schema_migrations.
// Open applies the migrations that are missing; migrations are append-only
// and each runs once, in order, in its own transaction.
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
// it runs through cockroach-go's retry helper (crdbpgxv5.ExecuteTx), which
// retries in place; migrations use the helper on both.
//
// Errors are translated once, here: SQLSTATE 40001 and 40P01 restart the
// whole group (after a read outside any transaction that answers the batches
// whose conditions no longer hold) and become store.ErrRetryable if they
// persist; 40003, an ambiguous RELEASE and a connection lost once COMMIT was
// sent become *store.OutcomeUnknownError. A transaction whose COMMIT was sent
// and whose answer was never read is in doubt: the server may still commit
// it. Its keys stay held until its backend has ended (indoubt.go), so every
// later batch on them is ordered after it.
//
// Layering: imports store, pgx v5 and cockroach-go's crdb packages.
package sqlstore
