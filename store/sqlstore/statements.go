package sqlstore

import (
	"strconv"
	"strings"
)

// The statements of reads, of CockroachDB's transaction path and of
// connecting. The group's statements are in grouptx.go and onetrip.go, the
// migrations' in migrate.go and lock.go; Statements lists them all.
const (
	versionSQL   = "SELECT version()"
	getSQL       = "SELECT v, version FROM weft_kv WHERE k = $1"
	getManySQL   = "SELECT k, v, version FROM weft_kv WHERE k = ANY($1)"
	scanFromSQL  = "SELECT k, v, version FROM weft_kv WHERE k >= $1 ORDER BY k LIMIT $2"
	scanRangeSQL = "SELECT k, v, version FROM weft_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3"

	savepointSQL           = "SAVEPOINT cockroach_restart"
	releaseSavepointSQL    = "RELEASE SAVEPOINT cockroach_restart"
	rollbackToSavepointSQL = "ROLLBACK TO SAVEPOINT cockroach_restart"

	// upsertCockroachSQL is upsertSQL on CockroachDB: a blind write of whole
	// rows, where INSERT … ON CONFLICT DO UPDATE reads each row first.
	upsertCockroachSQL = `UPSERT INTO weft_kv (k, v, version)
SELECT t.k, t.v, t.version FROM unnest($1::BYTEA[], $2::BYTEA[], $3::INT8[]) AS t(k, v, version)`
)

// upsert answers the statement that writes a group's puts on server.
func upsert(server Dialect) string {
	if server == CockroachDB {
		return upsertCockroachSQL
	}
	return upsertSQL
}

// sessionSQL is what each new connection to server runs first:
//   - statement_timeout, from StatementTimeout, and
//     idle_in_transaction_session_timeout, from IdleInTransactionTimeout, on
//     both databases. The store never idles inside a transaction for more
//     than a round trip, but a session that did (a hung process) would pin
//     PostgreSQL's predicate locks of every SERIALIZABLE transaction committed
//     since, and hold CockroachDB's intents.
//   - on PostgreSQL, plan_cache_mode = force_generic_plan with
//     enable_seqscan = off: each of the store's prepared statements is
//     planned once per session, not on every execution (planning a key
//     lookup took longer than running it), and its one plan reads the primary
//     key index. Every statement the store runs is a lookup or a range of
//     keys, for which the index is the right plan at any table size; without
//     enable_seqscan = off a generic plan of a k = ANY($1) statement made
//     while the table was small stays a sequential scan as the table grows
//     (measured at up to 40 ms a statement).
//   - on CockroachDB's path, default_transaction_isolation = serializable:
//     the one-round-trip pipeline is an implicit transaction (onetrip.go),
//     which a cluster whose default is READ COMMITTED would otherwise run
//     at that level; on PostgreSQL (the path forced onto it, Config.Path)
//     it makes reads SERIALIZABLE too, as CockroachDB's are.
func (c Config) sessionSQL(server Dialect) string {
	var set []string
	if server == PostgreSQL {
		set = append(set, "SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off")
	}
	if server == CockroachDB || c.Path == CockroachDB {
		set = append(set, "SET default_transaction_isolation = serializable")
	}
	if c.StatementTimeout > 0 {
		set = append(set, "SET statement_timeout = "+strconv.FormatInt(c.StatementTimeout.Milliseconds(), 10))
	}
	if c.IdleInTransactionTimeout > 0 {
		set = append(set, "SET idle_in_transaction_session_timeout = "+strconv.FormatInt(c.IdleInTransactionTimeout.Milliseconds(), 10))
	}
	return strings.Join(set, "; ")
}

// Statement is one statement the store sends.
type Statement struct {
	// Name says what it is for.
	Name string
	// SQL is its text, as sent.
	SQL string
}

// Statements answers every statement the store sends to server (with
// cfg's session settings), in one list: the dialect test checks each
// against what CockroachDB supports, and that the store sends no other.
// The migrations' statements are listed one by one.
func Statements(server Dialect, cfg Config) ([]Statement, error) {
	cfg = cfg.WithDefaults()
	out := []Statement{
		{"detect the database", versionSQL},
		{"session settings", cfg.sessionSQL(server)},
		{"get", getSQL}, {"get many", getManySQL}, {"scan from", scanFromSQL}, {"scan a range", scanRangeSQL},
		{"begin (group)", beginSQL}, {"commit", commitSQL}, {"rollback", rollbackSQL},
		{"lock the condition keys", lockConditionsSQL}, {"read the condition keys", readConditionsSQL},
		{"delete", deleteSQL}, {"upsert", upsert(server)}, {"draw the store's node number", drawNodeSQL},
		{"savepoint", savepointSQL}, {"release the savepoint", releaseSavepointSQL},
		{"roll back to the savepoint", rollbackToSavepointSQL},
		{"create the migrations table", createMigrationsTableSQL}, {"record a migration", recordMigrationSQL},
		{"read the applied migrations", appliedMigrationsSQL},
		{"create the migration lock table", createLockTableSQL}, {"take the migration lock", takeLockSQL},
		{"renew the migration lock", renewLockSQL}, {"release the migration lock", releaseLockSQL},
	}
	if server == PostgreSQL {
		out = append(out, Statement{"check conditions (one trip)", checkConditionsSQL},
			Statement{"end a backend in doubt", terminateSQL}, Statement{"is a backend alive", backendAliveSQL})
	}
	if server == CockroachDB || cfg.Path == CockroachDB {
		out = append(out, Statement{"check conditions (one trip, implicit transaction)", checkConditionsImplicitSQL})
	}
	if server == CockroachDB {
		out = append(out, Statement{"read the session id", sessionIDSQL},
			Statement{"end a session in doubt", cancelSessionSQL}, Statement{"is a session alive", sessionAliveSQL})
	}
	migrations, err := Migrations()
	if err != nil {
		return nil, err
	}
	for _, m := range migrations {
		for i, stmt := range m.Statements() {
			out = append(out, Statement{m.Name + " statement " + strconv.Itoa(i), stmt})
		}
	}
	return out, nil
}
