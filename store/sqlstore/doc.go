// Package sqlstore is the SQL store.Store: CockroachDB through pgx v5, at
// SERIALIZABLE isolation. The same SQL runs on PostgreSQL, which is what the
// tests here use; CockroachDB runs the same suite where COCKROACH_BINARY names
// a cockroach binary.
//
// Schema: one table, weft_kv(k BYTEA PRIMARY KEY, v BYTEA NOT NULL,
// version INT8 NOT NULL) with fillfactor 85 (room on each page for the
// rewrites of its rows), and the sequence weft_store_node, created by the
// embedded migrations in migrations/ and recorded in weft_schema_migrations.
// Open applies the migrations that are missing (migrate.go) under the
// cluster's migration lock, a row with a lease in weft_schema_lock (lock.go;
// CockroachDB has no advisory locks): each statement in its own transaction,
// idempotent, and the migration's record written only after its statements
// ran. With Config.CheckSchemaOnly it applies none and refuses an incomplete
// schema, naming the missing migration. Migrations are append-only.
//
// Versions are the store's own (versions.go): a hybrid logical clock's tick
// and the store's node number, drawn from weft_store_node once when it
// opens; no put writes a shared row (weft_kv_version, the sequence each put
// drew from before migration 0003, stays for older processes).
//
// Commit is a group commit (committer.go, group.go, grouptx.go, onetrip.go).
// Callers enqueue their batches; up to Config.MaxGroups leaders each take
// what is queued — never waiting for more — and commit it in one
// transaction. A group whose batches share no key first tries one round
// trip (onetrip.go): a check of the condition keys that raises an error
// when a condition fails, one DELETE and one upsert, pipelined — inside
// BEGIN … COMMIT on PostgreSQL (the check locking the rows FOR UPDATE), as
// one implicit transaction the pipeline's Sync commits on CockroachDB's
// path (which CockroachDB retries on the server). Every batch commits, or a
// failed condition aborts the transaction before any write; then one read
// answers the batches whose conditions fail, and the same attempt decides
// the rest batch by batch. Batch by batch is: SELECT … ORDER BY k FOR
// UPDATE of every condition key (one round trip), then, in Go, each
// batch's conditions in arrival order against the rows read and the writes
// of the batches accepted before it, each accepted batch's puts getting
// their versions, then one DELETE and one multi-row upsert of what the
// accepted batches leave behind, and COMMIT (a second round trip). Each
// caller gets its own answer: its versions, its own
// *store.ConditionFailedError, or, for a commit whose outcome is unknown,
// *store.OutcomeUnknownError (every batch of that group). Groups in flight
// at once never share a key. The one-round-trip path reuses its buffers
// from group to group, encodes its arrays once in PostgreSQL's binary array
// format (onetrip.go, arrays.go) and hands them to pgconn's pipeline itself,
// with statements it prepares once per connection: the same messages
// pgx.Batch would send, encoded in room the connection keeps for them
// (sendroom.go). A batch that finds the store idle is committed at once on
// its caller's goroutine. Every batch is copied when it is submitted (its
// caller may reuse its memory once Commit returns, even while its group
// still commits), into memory the store recycles once both the caller has
// its answer and the leader has finished with the batch (requestmem.go).
// Get and Scan are single statements, which read one consistent snapshot.
//
// One group is in flight at a time on PostgreSQL by default: its
// SERIALIZABLE tracks reads by B-tree page, so concurrent groups on
// neighbouring keys fail each other although they share none.
//
// When a group cannot commit in one round trip, its transaction takes two:
// on PostgreSQL BEGIN with the reads, then the writes with COMMIT; on
// CockroachDB's path (groupcrdb.go) BEGIN, SAVEPOINT cockroach_restart and
// the reads, then the writes (UPSERT), RELEASE (the commit) and COMMIT, as
// CockroachDB retries a transaction in place. Config.Path forces
// CockroachDB's path onto PostgreSQL (tests). statements.go and Statements
// list every statement the store sends.
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
// A transaction whose COMMIT (or implicit transaction's Sync) was sent and
// whose answer was never read is in doubt: the server may still commit it.
// Its keys stay held until its session has ended (indoubt.go): on
// PostgreSQL its backend terminated and gone from pg_stat_activity, on
// CockroachDB its session cancelled and gone from
// crdb_internal.cluster_sessions. So every later batch on them is ordered
// after it.
//
// Layering: imports store and pgx v5.
package sqlstore
