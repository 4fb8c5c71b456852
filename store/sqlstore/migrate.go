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

const createMigrationsTableSQL = `CREATE TABLE IF NOT EXISTS weft_schema_migrations (
    version INT8 PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`

// claimMigrationSQL records a migration; the primary key makes a concurrent
// migrator wait for, then skip, a migration another process is applying.
const claimMigrationSQL = `INSERT INTO weft_schema_migrations (version, name) VALUES ($1, $2)
ON CONFLICT (version) DO NOTHING RETURNING version`

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

// migrate applies, in order, every embedded migration not yet recorded.
func (s *Store) migrate(ctx context.Context) error {
	migrations, err := Migrations()
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, createMigrationsTableSQL); err != nil && !isDuplicateObject(err) {
		return fmt.Errorf("sqlstore: create migrations table: %w", err)
	}
	for _, m := range migrations {
		if err := s.apply(ctx, m); err != nil {
			return fmt.Errorf("sqlstore: migration %s: %w", m.Name, err)
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m Migration) error {
	return s.runTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var claimed int64
		err := tx.QueryRow(ctx, claimMigrationSQL, m.Version, m.Name).Scan(&claimed)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // already applied
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, m.SQL)
		return err
	}, nil)
}

// isDuplicateObject reports the errors PostgreSQL raises when two sessions run
// CREATE TABLE IF NOT EXISTS at once: the loser may trip over the table's
// name (42P07), its row type (42710) or the catalog's unique index (23505).
func isDuplicateObject(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P07" || pgErr.Code == "42710")
}
