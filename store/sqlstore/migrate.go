package sqlstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one embedded schema step.
type Migration struct {
	// Version is the number the file name starts with (0001_… is 1).
	Version int64
	// Name is the file name.
	Name string
	// SQL is the file's contents.
	SQL string
}

// Statements answers the migration's statements, each run on its own (in a
// transaction of its own): the file's text without its comment lines, split
// at each semicolon. A migration's statements are idempotent
// (CREATE … IF NOT EXISTS, settings), so that one interrupted between two
// statements, or between its last statement and its record, runs again
// whole.
func (m Migration) Statements() []string {
	var b strings.Builder
	for line := range strings.SplitSeq(m.SQL, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	var out []string
	for stmt := range strings.SplitSeq(b.String(), ";") {
		if stmt = strings.TrimSpace(stmt); stmt != "" {
			out = append(out, stmt)
		}
	}
	return out
}

const (
	createMigrationsTableSQL = `CREATE TABLE IF NOT EXISTS weft_schema_migrations (
    version INT8 PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`
	// recordMigrationSQL records a migration once its statements have run.
	recordMigrationSQL = `INSERT INTO weft_schema_migrations (version, name) VALUES ($1, $2)
ON CONFLICT (version) DO NOTHING`
	appliedMigrationsSQL = "SELECT version FROM weft_schema_migrations"
)

// Migrations returns the embedded migrations in order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		version, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || version < 1 {
			return nil, fmt.Errorf("sqlstore: migration %q must be named NNNN_name.sql", name)
		}
		body, err := migrationFiles.ReadFile("migrations/" + name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: version, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// SchemaIncompleteError is Open's answer when the database lacks migrations
// this store needs and it did not apply them: Config.CheckSchemaOnly was
// set, or another process held the migration lock for longer than
// Config.MigrationLockWait.
type SchemaIncompleteError struct {
	// Missing names the migrations not recorded, in order.
	Missing []string
	// Reason says why Open did not apply them.
	Reason string
}

func (e *SchemaIncompleteError) Error() string {
	return fmt.Sprintf("sqlstore: the database schema is incomplete, missing migration %s (%s)",
		strings.Join(e.Missing, ", "), e.Reason)
}

// MigrationPoint is a moment of a migration run, where a test's hook
// (Config's migration hook) steps in: the crash tests stop the process at
// each one.
type MigrationPoint struct {
	// Step is one of the MigrationStep… names.
	Step string
	// Migration is the file's name; empty for MigrationStepLocked.
	Migration string
	// Statement indexes the migration's statements (MigrationStepStatement
	// and MigrationStepStatementDone).
	Statement int
}

// The steps of a migration run, in order: the lock is taken, then for each
// missing migration each statement runs, then its record is written.
const (
	MigrationStepLocked        = "locked"
	MigrationStepStatement     = "before statement"
	MigrationStepStatementDone = "after statement"
	MigrationStepRecord        = "before record"
	MigrationStepRecorded      = "after record"
)

func (p MigrationPoint) String() string {
	switch p.Step {
	case MigrationStepLocked:
		return p.Step
	case MigrationStepStatement, MigrationStepStatementDone:
		return fmt.Sprintf("%s %d of %s", p.Step, p.Statement, p.Migration)
	}
	return p.Step + " of " + p.Migration
}

// migrate makes sure every embedded migration is applied. When the records
// say so already it takes no lock. Otherwise, unless Config.CheckSchemaOnly
// is set, it takes the cluster's migration lock (lock.go), reads the records
// again, and applies each missing migration: its statements one by one, each
// in its own transaction, then its record in another. A migration is so
// recorded only once its statements have all run; a run interrupted at any
// point leaves at most the statements of one unrecorded migration applied,
// which the next run applies again (they are idempotent).
func (s *Store) migrate(ctx context.Context) error {
	migrations, err := Migrations()
	if err != nil {
		return err
	}
	if !s.cfg.CheckSchemaOnly { // a process that only checks creates nothing
		if err := s.createTable(ctx, createMigrationsTableSQL); err != nil {
			return fmt.Errorf("sqlstore: create migrations table: %w", err)
		}
	}
	missing, err := s.missingMigrations(ctx, migrations)
	if err != nil || len(missing) == 0 {
		return err
	}
	if s.cfg.CheckSchemaOnly {
		return &SchemaIncompleteError{Missing: names(missing), Reason: "this process applies none: it only checks the schema"}
	}
	lock, err := s.lockMigrations(ctx, names(missing))
	if err != nil {
		return err
	}
	defer lock.release()
	if err := s.migrationPoint(MigrationPoint{Step: MigrationStepLocked}); err != nil {
		return err
	}
	if missing, err = s.missingMigrations(lock.ctx, migrations); err != nil {
		return lock.cause(err)
	}
	for _, m := range missing {
		if err := s.apply(lock.ctx, m); err != nil {
			return lock.cause(fmt.Errorf("sqlstore: migration %s: %w", m.Name, err))
		}
	}
	return nil
}

// apply runs m's statements, then records it.
func (s *Store) apply(ctx context.Context, m Migration) error {
	for i, stmt := range m.Statements() {
		if err := s.migrationPoint(MigrationPoint{Step: MigrationStepStatement, Migration: m.Name, Statement: i}); err != nil {
			return err
		}
		if _, err := s.pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("statement %d: %w", i, err)
		}
		if err := s.migrationPoint(MigrationPoint{Step: MigrationStepStatementDone, Migration: m.Name, Statement: i}); err != nil {
			return err
		}
	}
	if err := s.migrationPoint(MigrationPoint{Step: MigrationStepRecord, Migration: m.Name}); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, recordMigrationSQL, m.Version, m.Name); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return s.migrationPoint(MigrationPoint{Step: MigrationStepRecorded, Migration: m.Name})
}

// missingMigrations answers the migrations of all that are not recorded.
func (s *Store) missingMigrations(ctx context.Context, all []Migration) ([]Migration, error) {
	var applied []int64
	rows, err := s.pool.Query(ctx, appliedMigrationsSQL)
	if err == nil {
		applied, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if sqlState(err) == "42P01" { // undefined_table: no migration ever ran
		return all, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read the applied migrations: %w", err)
	}
	var missing []Migration
	for _, m := range all {
		if !containsVersion(applied, m.Version) {
			missing = append(missing, m)
		}
	}
	return missing, nil
}

func containsVersion(versions []int64, v int64) bool {
	for _, x := range versions {
		if x == v {
			return true
		}
	}
	return false
}

func names(ms []Migration) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// migrationPoint runs the test hook, if any.
func (s *Store) migrationPoint(p MigrationPoint) error {
	if s.cfg.migrationHook == nil {
		return nil
	}
	return s.cfg.migrationHook(p)
}

// createTable runs a CREATE TABLE IF NOT EXISTS statement, which on
// PostgreSQL can still fail when two sessions run it at once.
func (s *Store) createTable(ctx context.Context, sql string) error {
	if _, err := s.pool.Exec(ctx, sql); err != nil && !isDuplicateObject(err) {
		return err
	}
	return nil
}

// isDuplicateObject reports the errors PostgreSQL raises when two sessions run
// CREATE TABLE IF NOT EXISTS at once: the loser may trip over the table's
// name (42P07), its row type (42710) or the catalog's unique index (23505).
func isDuplicateObject(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P07" || pgErr.Code == "42710")
}
