package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/store"
)

const (
	lockConditionsSQL = "SELECT k, version FROM weft_kv WHERE k = ANY($1) FOR UPDATE"
	readConditionsSQL = "SELECT k, version FROM weft_kv WHERE k = ANY($1)"
	deleteSQL         = "DELETE FROM weft_kv WHERE k = ANY($1)"
	upsertSQL         = `INSERT INTO weft_kv (k, v, version)
SELECT t.k, t.v, nextval('weft_kv_version') FROM unnest($1::BYTEA[], $2::BYTEA[]) AS t(k, v)
ON CONFLICT (k) DO UPDATE SET v = excluded.v, version = excluded.version
RETURNING k, version`
)

// plan is a validated batch split into the statement arguments.
type plan struct {
	conds      []store.Condition
	condKeys   [][]byte
	delKeys    [][]byte
	putKeys    [][]byte
	putValues  [][]byte
	putIndexes map[string]int // key → index in the batch's Ops
	nOps       int
}

func planBatch(b *store.Batch) *plan {
	p := &plan{conds: b.Conditions, putIndexes: map[string]int{}, nOps: len(b.Ops)}
	for _, c := range b.Conditions {
		p.condKeys = append(p.condKeys, c.Key)
	}
	for i, op := range b.Ops {
		if op.Kind == store.OpDelete {
			p.delKeys = append(p.delKeys, op.Key)
			continue
		}
		value := op.Value
		if value == nil {
			value = []byte{} // nil would be NULL
		}
		p.putKeys = append(p.putKeys, op.Key)
		p.putValues = append(p.putValues, value)
		p.putIndexes[string(op.Key)] = i
	}
	return p
}

// exec runs the plan inside tx in one pipelined round trip. Statements run in
// order, so the condition rows are read (and locked) before any write.
func (p *plan) exec(ctx context.Context, tx pgx.Tx) (*store.CommitResult, error) {
	batch := &pgx.Batch{}
	if len(p.condKeys) > 0 {
		batch.Queue(lockConditionsSQL, p.condKeys)
	}
	if len(p.delKeys) > 0 {
		batch.Queue(deleteSQL, p.delKeys)
	}
	if len(p.putKeys) > 0 {
		batch.Queue(upsertSQL, p.putKeys, p.putValues)
	}
	res := &store.CommitResult{Versions: make([]uint64, p.nOps)}
	if batch.Len() == 0 {
		return res, nil
	}
	br := tx.SendBatch(ctx, batch)
	err := p.readResults(br, res)
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (p *plan) readResults(br pgx.BatchResults, res *store.CommitResult) error {
	if len(p.condKeys) > 0 {
		if err := p.checkConditions(br); err != nil {
			return err
		}
	}
	if len(p.delKeys) > 0 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if len(p.putKeys) > 0 {
		return p.readVersions(br, res)
	}
	return nil
}

// recheck returns, for a batch with conditions, a check that reads the
// condition keys outside any transaction and reports the first condition that
// no longer holds.
func (p *plan) recheck(q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) func(context.Context) error {
	if len(p.condKeys) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		rows, err := q.Query(ctx, readConditionsSQL, p.condKeys)
		if err != nil {
			return nil // the restarted transaction will find out
		}
		var cf *store.ConditionFailedError
		if err := p.check(rows); errors.As(err, &cf) {
			return err
		}
		return nil
	}
}

func (p *plan) checkConditions(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	return p.check(rows)
}

// check reads (key, version) rows and evaluates the conditions against them.
func (p *plan) check(rows pgx.Rows) error {
	found := map[string]uint64{}
	var k []byte
	var version int64
	_, err := pgx.ForEachRow(rows, []any{&k, &version}, func() error {
		found[string(k)] = uint64(version)
		return nil
	})
	if err != nil {
		return err
	}
	return store.CheckConditions(p.conds, func(key []byte) (bool, uint64, error) {
		v, ok := found[string(key)]
		return ok, v, nil
	})
}

func (p *plan) readVersions(br pgx.BatchResults, res *store.CommitResult) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	var k []byte
	var version int64
	n := 0
	_, err = pgx.ForEachRow(rows, []any{&k, &version}, func() error {
		i, ok := p.putIndexes[string(k)]
		if !ok {
			return fmt.Errorf("sqlstore: upsert returned a key %q it was not given", k)
		}
		res.Versions[i] = uint64(version)
		n++
		return nil
	})
	if err == nil && n != len(p.putKeys) {
		err = fmt.Errorf("sqlstore: upsert returned %d rows for %d keys", n, len(p.putKeys))
	}
	return err
}
