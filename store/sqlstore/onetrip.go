package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/store"
)

const (
	// checkConditionsSQL locks the rows of the condition keys in key order,
	// like lockConditionsSQL, and raises division_by_zero (SQLSTATE 22012,
	// codeConditionFailed) when a condition does not hold, which aborts the
	// transaction before any write of the pipeline runs. The kinds are
	// store.ConditionKind's numbers; its CASE is store.Condition.Holds.
	checkConditionsSQL = `SELECT 1 / (count(*) = 0)::INT
FROM unnest($1::BYTEA[], $2::INT8[], $3::INT8[]) AS c(k, kind, version)
LEFT JOIN (SELECT k, version FROM weft_kv WHERE k = ANY($1) ORDER BY k FOR UPDATE) AS cur ON cur.k = c.k
WHERE NOT CASE c.kind WHEN 1 THEN cur.k IS NULL WHEN 2 THEN cur.k IS NOT NULL
ELSE cur.version IS NOT DISTINCT FROM c.version END`
	// upsertDrawingSQL is upsertSQL drawing each row's version from the
	// sequence itself and answering it.
	upsertDrawingSQL = `INSERT INTO weft_kv (k, v, version)
SELECT t.k, t.v, nextval('weft_kv_version') FROM unnest($1::BYTEA[], $2::BYTEA[]) AS t(k, v)
ON CONFLICT (k) DO UPDATE SET v = excluded.v, version = excluded.version
RETURNING k, version`
	// codeConditionFailed is what checkConditionsSQL raises.
	codeConditionFailed = "22012"
)

// errConditionsFailed ends a one-round-trip attempt in which a condition did
// not hold: the transaction rolled back and wrote nothing.
var errConditionsFailed = errors.New("sqlstore: a condition of the group does not hold")

// oneTrip reports whether g's live batches may commit in one round trip: on
// PostgreSQL, without a test hook, when no two of them share a key. Then no
// batch's conditions depend on another's writes: each holds or not on the
// rows as they were, and the writes of the batches are disjoint.
func (s *Store) oneTrip(g *group) bool {
	if s.dialect != PostgreSQL || s.hooks.afterRead != nil {
		return false
	}
	if len(g.live) == 1 {
		return true
	}
	seen := map[string]struct{}{}
	for _, i := range g.live {
		for _, k := range g.reqs[i].keys {
			if _, dup := seen[k]; dup {
				return false
			}
			seen[k] = struct{}{}
		}
	}
	return true
}

// oneTripWrites is what a one-round-trip attempt sends: every condition,
// and every write, the puts in key order.
type oneTripWrites struct {
	condKeys           byteaArray
	condKinds, condVer int8Array
	deletes            byteaArray
	putKeys, putValues byteaArray
}

func (g *group) oneTripWrites() *oneTripWrites {
	w := &oneTripWrites{}
	var puts []store.Op
	for _, i := range g.live {
		r := g.reqs[i]
		for _, c := range r.conds {
			w.condKeys = append(w.condKeys, c.Key)
			w.condKinds = append(w.condKinds, int64(c.Kind))
			w.condVer = append(w.condVer, int64(c.Version))
		}
		for _, op := range r.ops {
			if op.Kind == store.OpDelete {
				w.deletes = append(w.deletes, op.Key)
			} else {
				puts = append(puts, op)
			}
		}
	}
	slices.SortFunc(w.deletes, bytes.Compare)
	slices.SortFunc(puts, func(a, b store.Op) int { return bytes.Compare(a.Key, b.Key) })
	w.putKeys, w.putValues = make(byteaArray, len(puts)), make(byteaArray, len(puts))
	for i, op := range puts {
		w.putKeys[i], w.putValues[i] = op.Key, op.Value
	}
	return w
}

// end is the statement that ends the transaction: COMMIT, or ROLLBACK when
// nothing is written (see endSQL).
func (w *oneTripWrites) end() string {
	if len(w.deletes) == 0 && len(w.putKeys) == 0 {
		return rollbackSQL
	}
	return commitSQL
}

// pipelineOnce is one attempt of a group's transaction on PostgreSQL in one
// round trip, for a group oneTrip accepts: BEGIN, checkConditionsSQL, the
// delete, the upsert drawing the versions, and COMMIT, pipelined. Every
// batch commits, or none: when a condition fails the check aborts the
// transaction and pipelineOnce answers errConditionsFailed, after which the
// caller decides the group batch by batch (pipelineGroup). Other failures are
// classified as pipelineGroup's.
func (s *Store) pipelineOnce(ctx context.Context, conn *pgxpool.Conn, g *group) error {
	w := g.oneTripWrites()
	b := &pgx.Batch{}
	b.Queue(beginSQL)
	if len(w.condKeys) > 0 {
		b.Queue(checkConditionsSQL, w.condKeys, w.condKinds, w.condVer)
	}
	if len(w.deletes) > 0 {
		b.Queue(deleteSQL, w.deletes)
	}
	if len(w.putKeys) > 0 {
		b.Queue(upsertDrawingSQL, w.putKeys, w.putValues)
	}
	end := w.end()
	b.Queue(end)
	br := conn.SendBatch(ctx, b)
	versions, err := readOnce(br, w, end)
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		g.acceptAll(versions)
		return nil
	case sqlState(err) == codeConditionFailed:
		rollback(conn)
		return errConditionsFailed
	case errors.As(err, &pgErr), pgconn.SafeToRetry(err):
		rollback(conn)
		return err
	default:
		return &store.OutcomeUnknownError{Cause: fmt.Errorf("sqlstore: COMMIT: %w", err)}
	}
}

// readOnce reads pipelineOnce's results: the versions drawn, by key.
func readOnce(br pgx.BatchResults, w *oneTripWrites, end string) (map[string]uint64, error) {
	if _, err := br.Exec(); err != nil { // BEGIN
		return nil, err
	}
	if len(w.condKeys) > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	if len(w.deletes) > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	versions := make(map[string]uint64, len(w.putKeys))
	if len(w.putKeys) > 0 {
		rows, err := br.Query()
		if err != nil {
			return nil, err
		}
		var k []byte
		var v int64
		if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error {
			versions[string(k)] = uint64(v)
			return nil
		}); err != nil {
			return nil, err
		}
		if len(versions) != len(w.putKeys) {
			return nil, fmt.Errorf("sqlstore: upsert wrote %d rows for %d keys", len(versions), len(w.putKeys))
		}
	}
	tag, err := br.Exec()
	if err == nil && tag.String() != end {
		err = fmt.Errorf("sqlstore: %s answered %q", end, tag)
	}
	return versions, err
}

// acceptAll records every live batch as committed, each put with the
// version drawn for its key.
func (g *group) acceptAll(versions map[string]uint64) {
	for _, i := range g.live {
		r := g.reqs[i]
		res := &store.CommitResult{Versions: make([]uint64, len(r.ops))}
		for j, op := range r.ops {
			if op.Kind == store.OpPut {
				res.Versions[j] = versions[string(op.Key)]
			}
		}
		g.outcomes[i] = outcome{res: res}
	}
}
