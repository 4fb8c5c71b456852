package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-dev/weft/store"
)

const (
	// lockConditionsSQL locks the rows of every condition key of a group in
	// key order (the rows a SELECT … FOR UPDATE returns are locked after
	// sorting), so two groups never wait on each other's rows in opposite
	// orders.
	lockConditionsSQL = "SELECT k, version FROM weft_kv WHERE k = ANY($1) ORDER BY k FOR UPDATE"
	readConditionsSQL = "SELECT k, version FROM weft_kv WHERE k = ANY($1)"
	deleteSQL         = "DELETE FROM weft_kv WHERE k = ANY($1)"
	// upsertSQL writes a group's puts on PostgreSQL. MERGE, where INSERT …
	// ON CONFLICT DO UPDATE would insert each row speculatively and log a
	// confirmation of it (a WAL record per row). A key another transaction
	// inserts meanwhile is a serialization failure (40001) under
	// SERIALIZABLE, as it is for ON CONFLICT: the store retries it.
	upsertSQL = `MERGE INTO weft_kv AS w
USING unnest($1::BYTEA[], $2::BYTEA[], $3::INT8[]) AS t(k, v, version) ON w.k = t.k
WHEN MATCHED THEN UPDATE SET v = t.v, version = t.version
WHEN NOT MATCHED THEN INSERT (k, v, version) VALUES (t.k, t.v, t.version)`
)

// group is the batches one transaction commits, in arrival order. A
// transaction attempt reads (queueReads, readResults), decides every batch
// (decide) and writes what the accepted ones leave behind (writes).
type group struct {
	reqs []*request
	// disjoint is set when the committer found that no two of reqs share a
	// key (see oneTrip).
	disjoint bool
	// live indexes the requests the transaction still decides; a recheck
	// answers some of them early and drops them.
	live []int
	// condKeys is set by index, which the paths that read the
	// condition keys first (queueReads, recheck) run once: a group that
	// commits in one round trip never needs them.
	indexed  bool
	condKeys [][]byte // every condition key of the live requests, sorted, once
	// outcomes holds each request's outcome (same index as reqs): set by
	// decide for live requests (afresh on every attempt), by recheck for the
	// ones it dropped.
	outcomes []outcome
}

// errGroupDecided ends a group's retries when a recheck answered every batch.
var errGroupDecided = errors.New("sqlstore: every batch of the group was decided by a recheck")

func newGroup(reqs []*request) *group {
	g := &group{reqs: reqs, live: make([]int, len(reqs)), outcomes: make([]outcome, len(reqs))}
	for i := range reqs {
		g.live[i] = i
	}
	return g
}

// indexOnce runs index unless it ran since the live requests last changed.
func (g *group) indexOnce() {
	if !g.indexed {
		g.index()
	}
}

// index gathers the condition keys of the live requests.
func (g *group) index() {
	g.indexed = true
	g.condKeys = nil
	seen := map[string]struct{}{}
	for _, i := range g.live {
		r := g.reqs[i]
		for _, c := range r.conds {
			if _, dup := seen[string(c.Key)]; !dup {
				seen[string(c.Key)] = struct{}{}
				g.condKeys = append(g.condKeys, c.Key)
			}
		}
	}
	slices.SortFunc(g.condKeys, bytes.Compare)
}

// keyState is what a condition sees of a key.
type keyState struct {
	found   bool
	version uint64
}

// queueReads queues the reads of an attempt: lock and read the condition
// keys.
func (g *group) queueReads(b *pgx.Batch) {
	g.indexOnce()
	if len(g.condKeys) > 0 {
		b.Queue(lockConditionsSQL, byteaArray(g.condKeys))
	}
}

// readResults reads what queueReads queued: the condition keys found.
func (g *group) readResults(br pgx.BatchResults) (map[string]keyState, error) {
	state := make(map[string]keyState, len(g.condKeys))
	if len(g.condKeys) > 0 {
		rows, err := br.Query()
		if err != nil {
			return nil, err
		}
		if err := scanStates(rows, state); err != nil {
			return nil, err
		}
	}
	return state, nil
}

// scanStates adds the (key, version) rows to state.
func scanStates(rows pgx.Rows, state map[string]keyState) error {
	var k []byte
	var version int64
	_, err := pgx.ForEachRow(rows, []any{&k, &version}, func() error {
		state[string(k)] = keyState{found: true, version: uint64(version)}
		return nil
	})
	return err
}

func lookupIn(state map[string]keyState) func([]byte) (bool, uint64, error) {
	return func(key []byte) (bool, uint64, error) {
		s := state[string(key)]
		return s.found, s.version, nil
	}
}

// decide evaluates each live batch's conditions in arrival order against
// state — the database's rows, then each accepted batch's writes — and
// records every live batch's outcome. A batch whose condition fails changes
// nothing and never affects its neighbours. Each accepted batch's puts get
// versions from clock, drawn after its conditions' versions were observed,
// so that a later batch's conditions see the exact versions an earlier
// batch of the same group writes, and a compare-and-set writes a version
// above the one it held. It answers what the accepted batches leave behind:
// for each key, its last write.
func (g *group) decide(state map[string]keyState, clock *versionClock) *writes {
	w := &writes{last: map[string]int{}}
	lookup := lookupIn(state)
	for _, i := range g.live {
		r := g.reqs[i]
		if err := checkConditions(r.conds, lookup); err != nil {
			g.outcomes[i] = outcome{err: err}
			continue
		}
		observeConditions(clock, r.conds)
		res := &store.CommitResult{Versions: make([]uint64, len(r.ops))}
		tick := clock.next(r.nPuts)
		for j, op := range r.ops {
			if op.Kind == store.OpDelete {
				state[string(op.Key)] = keyState{}
				w.set(op.Key, nil, 0)
				continue
			}
			v := clock.version(tick)
			tick++
			res.Versions[j] = v
			state[string(op.Key)] = keyState{found: true, version: v}
			w.set(op.Key, op.Value, v)
		}
		g.outcomes[i] = outcome{res: res}
	}
	return w
}

// observeConditions advances clock past the versions conds hold.
func observeConditions(clock *versionClock, conds []store.Condition) {
	for _, c := range conds {
		if c.Kind == store.CondVersion {
			clock.observe(c.Version)
		}
	}
}

// recheck runs before a transaction that would likely be wasted, and between
// attempts (the failed one wrote nothing). It reads the condition keys in one
// statement — one snapshot, outside any transaction — and answers at once
// each batch with a condition that does not hold there, provided no batch
// before it in the group writes one of its condition keys (which could make
// it hold): that is a valid answer at the instant of the read. It answers
// errGroupDecided when no batch is left for the transaction, and ignores a
// failed read (the transaction will find out).
func (g *group) recheck(ctx context.Context, q querier) error {
	g.indexOnce()
	if len(g.condKeys) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, readConditionsSQL, byteaArray(g.condKeys))
	if err != nil {
		return nil
	}
	state := map[string]keyState{}
	if scanStates(rows, state) != nil {
		return nil
	}
	lookup := lookupIn(state)
	written := map[string]struct{}{}
	live := g.live[:0]
	for _, i := range g.live {
		r := g.reqs[i]
		var cf *store.ConditionFailedError
		if !condsWritten(r.conds, written) && errors.As(checkConditions(r.conds, lookup), &cf) {
			g.outcomes[i] = outcome{err: cf}
			continue
		}
		live = append(live, i)
		for _, op := range r.ops {
			written[string(op.Key)] = struct{}{}
		}
	}
	g.live = live
	if len(live) == 0 {
		return errGroupDecided
	}
	g.index()
	return nil
}

// checkConditions is store.CheckConditions for a request's conditions, whose
// keys are in memory the request gives back (requestMems): the failed
// condition it answers gets a key of its own, as the error's Key is.
func checkConditions(conds []store.Condition, lookup func([]byte) (bool, uint64, error)) error {
	err := store.CheckConditions(conds, lookup)
	if cf, ok := err.(*store.ConditionFailedError); ok {
		cf.Condition.Key = bytes.Clone(cf.Condition.Key)
	}
	return err
}

func condsWritten(conds []store.Condition, written map[string]struct{}) bool {
	for _, c := range conds {
		if _, ok := written[string(c.Key)]; ok {
			return true
		}
	}
	return false
}

// querier is what recheck and the fences of indoubt.go read with: the
// pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// writes is the net effect of a group's accepted batches: each key's last
// write.
type writes struct {
	last map[string]int // key → index in ops
	ops  []netWrite
	// set by queue for readResults
	deletes, puts int
}

type netWrite struct {
	key, value []byte
	version    uint64 // 0: delete
}

func (w *writes) set(key, value []byte, version uint64) {
	if i, ok := w.last[string(key)]; ok {
		w.ops[i] = netWrite{key: key, value: value, version: version}
		return
	}
	w.last[string(key)] = len(w.ops)
	w.ops = append(w.ops, netWrite{key: key, value: value, version: version})
}

// queue queues one delete and one upsert, each over key-sorted arrays.
func (w *writes) queue(b *pgx.Batch) {
	slices.SortFunc(w.ops, func(a, b netWrite) int { return bytes.Compare(a.key, b.key) })
	puts := 0
	for _, op := range w.ops {
		if op.version != 0 {
			puts++
		}
	}
	delKeys := make([][]byte, 0, len(w.ops)-puts)
	putKeys, putValues, putVersions := make([][]byte, 0, puts), make([][]byte, 0, puts), make([]int64, 0, puts)
	for _, op := range w.ops {
		if op.version == 0 {
			delKeys = append(delKeys, op.key)
			continue
		}
		putKeys = append(putKeys, op.key)
		putValues = append(putValues, op.value)
		putVersions = append(putVersions, int64(op.version))
	}
	w.deletes, w.puts = len(delKeys), len(putKeys)
	if w.deletes > 0 {
		b.Queue(deleteSQL, byteaArray(delKeys))
	}
	if w.puts > 0 {
		b.Queue(upsertSQL, byteaArray(putKeys), byteaArray(putValues), int8Array(putVersions))
	}
}

// readResults reads what queue queued.
func (w *writes) readResults(br pgx.BatchResults) error {
	if w.deletes > 0 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if w.puts == 0 {
		return nil
	}
	tag, err := br.Exec()
	if err == nil && tag.RowsAffected() != int64(w.puts) {
		err = fmt.Errorf("sqlstore: upsert wrote %d rows for %d keys", tag.RowsAffected(), w.puts)
	}
	return err
}
