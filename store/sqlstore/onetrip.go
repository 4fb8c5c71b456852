package sqlstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
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
	// checkConditionsImplicitSQL is checkConditionsSQL on CockroachDB's
	// path, in the implicit transaction of one pipeline: the same check,
	// reading the rows without locking them. The transaction is SERIALIZABLE
	// (sessionSQL), so a write of a condition key between the check and the
	// commit fails it with a serialization failure, which CockroachDB
	// retries itself while the pipeline's answers are still unsent.
	checkConditionsImplicitSQL = `SELECT 1 / (count(*) = 0)::INT
FROM unnest($1::BYTEA[], $2::INT8[], $3::INT8[]) AS c(k, kind, version)
LEFT JOIN weft_kv AS cur ON cur.k = c.k
WHERE NOT CASE c.kind WHEN 1 THEN cur.k IS NULL WHEN 2 THEN cur.k IS NOT NULL
ELSE cur.version IS NOT DISTINCT FROM c.version END`
	// codeConditionFailed is what the checks raise.
	codeConditionFailed = "22012"
)

// errConditionsFailed ends a one-round-trip attempt in which a condition did
// not hold: the transaction rolled back and wrote nothing.
var errConditionsFailed = errors.New("sqlstore: a condition of the group does not hold")

// tripScratch is the buffers of one-round-trip attempts, reused from group
// to group (tripScratches): the seen set of oneTrip, the arrays a group
// sends, the versions of its puts among them. Nothing in it outlives the attempt
// that filled it: the arrays hold only references to the requests' own
// bytes, release lets go of them when the attempt ends, reset empties every
// part again before the next group, and what the callers get (acceptAll)
// is allocated afresh.
type tripScratch struct {
	seen map[uint64]int // key hash → index in group.reqs of a request with it
	w    oneTripWrites
	puts []tripPut
	// order is puts in key order, the order of w.putKeys: sorting pointers
	// moves and compares 8 bytes where a tripPut is 64.
	order []*tripPut
	// enc holds the statements' array parameters, encoded in PostgreSQL's
	// binary array format; pipelineOnce hands slices of it to pgconn as the
	// statements' parameters, which it copies into its write buffer once.
	enc [7][]byte
}

// tripPut is one put of a one-round-trip group and where its version goes.
type tripPut struct {
	key, value []byte
	req, op    int // index in group.reqs, and in that request's ops
	// lead is the key's first eight bytes, big-endian (zero-padded): two
	// keys whose leads differ sort as their leads do (compareKeys).
	lead uint64
}

// keyLead answers the first eight bytes of k as a big-endian number, those
// past its end zero. Keys whose leads differ compare as their leads: at the
// first byte where the leads differ, either both keys have that byte, or the
// shorter ended there and the longer's byte is not zero (it differs from the
// padding), so the shorter, a prefix of the longer, sorts first.
func keyLead(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var lead uint64
	for i, c := range k {
		lead |= uint64(c) << (56 - 8*i)
	}
	return lead
}

// compareKeys orders two puts by key: by their leads, and by their bytes when
// the leads are equal.
func compareKeys(a, b *tripPut) int {
	if a.lead != b.lead {
		if a.lead < b.lead {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.key, b.key)
}

var tripScratches = sync.Pool{New: func() any { return &tripScratch{seen: map[uint64]int{}} }}

// reset empties s's arrays for the next group. Those that grew past
// maxScratch entries are dropped rather than kept (one large group must not
// pin its arrays for good); release does the same with seen.
func (s *tripScratch) reset() {
	w := &s.w
	w.condKeys = resetSlice(w.condKeys, maxScratch)
	w.condKinds = resetSlice(w.condKinds, maxScratch)
	w.condVer = resetSlice(w.condVer, maxScratch)
	w.deletes = resetSlice(w.deletes, maxScratch)
	w.putKeys = resetSlice(w.putKeys, maxScratch)
	w.putValues = resetSlice(w.putValues, maxScratch)
	w.versions = resetSlice(w.versions, maxScratch)
	s.puts = resetSlice(s.puts, maxScratch)
	s.order = resetSlice(s.order, maxScratch)
	for i, b := range s.enc {
		if cap(b) > maxScratchBytes {
			b = nil
		}
		s.enc[i] = b[:0] // bytes only: nothing to clear
	}
}

// release empties s, keys included, before it goes back to tripScratches,
// so that a pooled scratch holds no reference to a finished group's rows.
func (s *tripScratch) release() {
	s.reset()
	if len(s.seen) > maxScratch {
		s.seen = map[uint64]int{}
	}
	clear(s.seen)
}

// The parameters of the statements, by their place in tripScratch.enc.
const (
	encCondKeys = iota
	encCondKinds
	encCondVersions
	encDeletes
	encPutKeys
	encPutValues
	encPutVersions
)

// encode encodes w's arrays into s.enc.
func (s *tripScratch) encode(w *oneTripWrites) {
	s.enc[encCondKeys] = appendByteaArray(s.enc[encCondKeys][:0], w.condKeys)
	s.enc[encCondKinds] = appendInt8Array(s.enc[encCondKinds][:0], w.condKinds)
	s.enc[encCondVersions] = appendInt8Array(s.enc[encCondVersions][:0], w.condVer)
	s.enc[encDeletes] = appendByteaArray(s.enc[encDeletes][:0], w.deletes)
	s.enc[encPutKeys] = appendByteaArray(s.enc[encPutKeys][:0], w.putKeys)
	s.enc[encPutValues] = appendByteaArray(s.enc[encPutValues][:0], w.putValues)
	s.enc[encPutVersions] = appendInt8Array(s.enc[encPutVersions][:0], w.versions)
}

// drawVersions gives each put of g's live batches (filled into sc by
// oneTripWrites) a version from clock, drawn after every condition's
// version was observed: no two batches of the group share a key, so each
// batch's puts get versions above the versions it is conditioned on.
func (sc *tripScratch) drawVersions(g *group, clock *versionClock) {
	for _, i := range g.live {
		observeConditions(clock, g.reqs[i].conds)
	}
	tick := clock.next(len(sc.w.versions))
	for at := range sc.w.versions {
		sc.w.versions[at] = int64(clock.version(tick))
		tick++
	}
}

// maxScratch bounds the entries a tripScratch keeps between groups.
const maxScratch = 4096

// maxScratchBytes bounds the bytes of each encoded array a tripScratch
// keeps between groups.
const maxScratchBytes = 1 << 20

// resetSlice empties s, clearing what it references, or drops it when its
// capacity passed limit. Entries past len(s) were cleared by the reset that
// emptied s before it grew to len(s).
func resetSlice[S ~[]E, E any](s S, limit int) S {
	if cap(s) > limit {
		return nil
	}
	clear(s)
	return s[:0]
}

// oneTrip reports whether g's live batches may commit in one round trip:
// without a test hook, when no two of them share a key. Then no
// batch's conditions depend on another's writes: each holds or not on the
// rows as they were, and the writes of the batches are disjoint. The
// committer tells it when the whole group shares no key (group.disjoint);
// otherwise it compares the batches' key hashes, and two batches that share
// a hash are taken to share a key (a collision only costs the round trip).
func (s *Store) oneTrip(g *group, sc *tripScratch) bool {
	if s.hooks.afterRead != nil {
		return false
	}
	if len(g.live) == 1 || g.disjoint {
		return true
	}
	clear(sc.seen)
	for _, i := range g.live {
		for _, k := range g.reqs[i].keys {
			if j, dup := sc.seen[k]; dup && j != i {
				return false
			}
			sc.seen[k] = i
		}
	}
	return true
}

// oneTripWrites is what a one-round-trip attempt sends: every condition,
// and every write, the puts in key order, their versions in the same order
// (drawVersions).
type oneTripWrites struct {
	condKeys           byteaArray
	condKinds, condVer int8Array
	deletes            byteaArray
	putKeys, putValues byteaArray
	versions           []int64
}

// oneTripWrites fills sc (reset first) with what g's live batches send, the
// versions left 0 for drawVersions.
func (g *group) oneTripWrites(sc *tripScratch) *oneTripWrites {
	sc.reset()
	w := &sc.w
	for _, i := range g.live {
		r := g.reqs[i]
		for _, c := range r.conds {
			w.condKeys = append(w.condKeys, c.Key)
			w.condKinds = append(w.condKinds, int64(c.Kind))
			w.condVer = append(w.condVer, int64(c.Version))
		}
		for j, op := range r.ops {
			if op.Kind == store.OpDelete {
				w.deletes = append(w.deletes, op.Key)
			} else {
				sc.puts = append(sc.puts, tripPut{key: op.Key, value: op.Value, req: i, op: j, lead: keyLead(op.Key)})
			}
		}
	}
	slices.SortFunc(w.deletes, bytes.Compare)
	for i := range sc.puts {
		sc.order = append(sc.order, &sc.puts[i])
	}
	slices.SortFunc(sc.order, compareKeys)
	for _, p := range sc.order {
		w.putKeys = append(w.putKeys, p.key)
		w.putValues = append(w.putValues, p.value)
	}
	w.versions = append(w.versions, make([]int64, len(sc.puts))...)
	return w
}

// end is the statement that ends the transaction on PostgreSQL's path:
// COMMIT, or ROLLBACK when nothing is written (see endSQL).
func (w *oneTripWrites) end() string {
	if len(w.deletes) == 0 && len(w.putKeys) == 0 {
		return rollbackSQL
	}
	return commitSQL
}

// tripStatements are the statements of a one-round-trip attempt, prepared
// on one connection (prepareTrip), and the room their messages are encoded
// in on that connection (sendRoom).
type tripStatements struct {
	begin, check, del, upsert, commit, rollback *pgconn.StatementDescription
	room                                        sendRoom
}

// tripStatementsKey is where prepareTrip keeps a connection's tripStatements
// (pgconn.PgConn.CustomData).
const tripStatementsKey = "weft/sqlstore.tripStatements"

// prepareTrip answers conn's one-round-trip statements, preparing them under
// names of their own the first time the connection sends them: on
// PostgreSQL's path BEGIN, the locking check, the delete, the upsert, COMMIT
// and ROLLBACK; on CockroachDB's the check of the implicit transaction, the
// delete and the upsert, spelt for server. They stay prepared for the
// connection's life, as pgx's own statement cache keeps the statements a
// pgx.Batch sends.
func prepareTrip(ctx context.Context, conn *pgx.Conn, path, server Dialect) (*tripStatements, error) {
	data := conn.PgConn().CustomData()
	if st, ok := data[tripStatementsKey].(*tripStatements); ok {
		return st, nil
	}
	st := &tripStatements{}
	type stmt struct {
		sd        **pgconn.StatementDescription
		name, sql string
	}
	stmts := []stmt{
		{&st.del, "weft_trip_delete", deleteSQL},
		{&st.upsert, "weft_trip_upsert", upsert(server)},
	}
	if path == PostgreSQL {
		stmts = append(stmts, stmt{&st.begin, "weft_trip_begin", beginSQL}, stmt{&st.check, "weft_trip_check", checkConditionsSQL},
			stmt{&st.commit, "weft_trip_commit", commitSQL}, stmt{&st.rollback, "weft_trip_rollback", rollbackSQL})
	} else {
		stmts = append(stmts, stmt{&st.check, "weft_trip_check", checkConditionsImplicitSQL})
	}
	for _, p := range stmts {
		sd, err := conn.Prepare(ctx, p.name, p.sql)
		if err != nil {
			return nil, err
		}
		*p.sd = sd
	}
	data[tripStatementsKey] = st
	return st, nil
}

// end answers the prepared statement of sql, COMMIT or ROLLBACK.
func (st *tripStatements) end(sql string) *pgconn.StatementDescription {
	if sql == commitSQL {
		return st.commit
	}
	return st.rollback
}

// Format codes of the statements' parameters and results, shared (pgconn
// only reads them).
var (
	binaryFormat = []int16{pgtype.BinaryFormatCode} // one code: every column
	noFormats    []int16
)

// pipelineOnce is one attempt of a group's transaction in one round trip,
// for a group oneTrip accepts. On PostgreSQL's path it pipelines BEGIN,
// checkConditionsSQL, the delete, the upsert and COMMIT. On CockroachDB's it
// pipelines checkConditionsImplicitSQL, the delete and the upsert alone: the
// statements before the pipeline's Sync are one implicit transaction, which
// the Sync commits, and which CockroachDB retries itself after a
// serialization failure, its answers (a row and two command tags) being
// still unsent then. Every batch commits, or none: when a condition fails
// the check aborts the transaction before any write and pipelineOnce
// answers errConditionsFailed, after which the caller decides the group
// batch by batch. The versions are the store's own (drawVersions): nothing
// is read back but the check's row and the command tags. Other failures are
// classified as pipelineGroup's: once the pipeline's end (COMMIT, or the
// Sync of the implicit transaction) was sent, a failure that is not the
// server's answer leaves the transaction in doubt.
//
// It speaks to pgconn's pipeline itself, as pgx.Conn.SendBatch would, with
// the statements prepared by prepareTrip and the parameters already encoded
// in the scratch: pgx would copy each encoded array once more into a buffer
// of its own before its pipeline copies it into the write buffer.
func (s *Store) pipelineOnce(ctx context.Context, conn *pgxpool.Conn, g *group, sc *tripScratch) error {
	st, err := prepareTrip(ctx, conn.Conn(), s.dialect, s.server)
	if err != nil {
		return err // before the pipeline: nothing was sent
	}
	w := g.oneTripWrites(sc)
	sc.drawVersions(g, s.clock)
	sc.encode(w)
	explicit := s.dialect == PostgreSQL
	end := w.end()
	pg := conn.Conn().PgConn()
	p := pg.StartPipeline(ctx)
	if !pg.IsClosed() { // a closed connection's Frontend may be sending its Terminate
		st.room.reserve(pg.Frontend(), pipelineBytes(sc))
	}
	if explicit {
		p.SendQueryStatement(st.begin, nil, noFormats, noFormats)
	}
	if len(w.condKeys) > 0 {
		p.SendQueryStatement(st.check, sc.enc[encCondKeys:encCondVersions+1], binaryFormat, noFormats)
	}
	if len(w.deletes) > 0 {
		p.SendQueryStatement(st.del, sc.enc[encDeletes:encDeletes+1], binaryFormat, noFormats)
	}
	if len(w.putKeys) > 0 {
		p.SendQueryStatement(st.upsert, sc.enc[encPutKeys:encPutVersions+1], binaryFormat, noFormats)
	}
	if explicit {
		p.SendQueryStatement(st.end(end), nil, noFormats, noFormats)
	}
	if err = p.Sync(); err == nil {
		s.hooks.sent(ctx, pg.PID())
		err = readOnce(p, w, explicit, end)
	}
	if closeErr := p.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		g.acceptAll(sc)
		return nil
	}
	var pgErr *pgconn.PgError // escapes (errors.As): declared only on failure
	switch {
	case sqlState(err) == codeConditionFailed:
		if explicit {
			rollback(conn)
		}
		return errConditionsFailed
	case errors.As(err, &pgErr), pgconn.SafeToRetry(err):
		if explicit {
			rollback(conn)
		}
		if stalePlan(pgErr) {
			forgetTrip(conn)
		}
		return err
	default:
		return s.inDoubt(conn, err)
	}
}

// stalePlan reports a server error after which a connection's prepared
// statements must not be used again: one no longer matching its table
// (0A000, "cached plan must not change result type") or gone (26000).
func stalePlan(err *pgconn.PgError) bool {
	return err != nil && (err.Code == "0A000" || err.Code == "26000")
}

// forgetTrip closes conn, and with it its prepared statements: the pool
// opens a new connection, whose statements prepareTrip prepares afresh
// (pgx's statement cache drops its statements after such an error too).
func forgetTrip(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = conn.Conn().Close(ctx)
}

// readOnce reads pipelineOnce's results in order: BEGIN and the end
// statement (COMMIT or ROLLBACK) when explicit, else the Sync that commits
// the implicit transaction. It stops at the first failure; the pipeline's
// Close reads what is left.
func readOnce(p *pgconn.Pipeline, w *oneTripWrites, explicit bool, end string) error {
	if explicit {
		if _, err := nextExec(p); err != nil { // BEGIN
			return err
		}
	}
	if len(w.condKeys) > 0 {
		if _, err := nextExec(p); err != nil {
			return err
		}
	}
	if len(w.deletes) > 0 {
		if _, err := nextExec(p); err != nil {
			return err
		}
	}
	if len(w.putKeys) > 0 {
		tag, err := nextExec(p)
		if err == nil && tag.RowsAffected() != int64(len(w.putKeys)) {
			err = fmt.Errorf("sqlstore: upsert wrote %d rows for %d keys", tag.RowsAffected(), len(w.putKeys))
		}
		if err != nil {
			return err
		}
	}
	if !explicit {
		return nextSync(p)
	}
	tag, err := nextExec(p)
	if err == nil && tag.String() != end {
		err = fmt.Errorf("sqlstore: %s answered %q", end, tag)
	}
	return err
}

// nextSync reads the answer to the pipeline's Sync: the commit of an
// implicit transaction, whose failure the server reports there.
func nextSync(p *pgconn.Pipeline) error {
	res, err := p.GetResults()
	if err != nil {
		return err
	}
	if _, ok := res.(*pgconn.PipelineSync); !ok {
		return fmt.Errorf("sqlstore: the pipeline answered %T for its Sync", res)
	}
	return nil
}

// nextResult answers the result of the pipeline's next statement.
func nextResult(p *pgconn.Pipeline) (*pgconn.ResultReader, error) {
	res, err := p.GetResults()
	if err != nil {
		return nil, err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return nil, fmt.Errorf("sqlstore: the pipeline answered %T for a statement", res)
	}
	return rr, nil
}

// nextExec reads the result of the pipeline's next statement to its end.
func nextExec(p *pgconn.Pipeline) (pgconn.CommandTag, error) {
	rr, err := nextResult(p)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return rr.Close()
}

// acceptAll records every live batch as committed, each put with the
// version drawn for its key (drawVersions). The results share two allocations.
func (g *group) acceptAll(sc *tripScratch) {
	nOps := 0
	for _, i := range g.live {
		nOps += len(g.reqs[i].ops)
	}
	results := make([]store.CommitResult, len(g.live))
	versions := make([]uint64, nOps)
	for n, i := range g.live {
		ops := len(g.reqs[i].ops)
		results[n].Versions = versions[:ops:ops]
		versions = versions[ops:]
		g.outcomes[i] = outcome{res: &results[n]}
	}
	for at, p := range sc.order {
		g.outcomes[p.req].res.Versions[p.op] = uint64(sc.w.versions[at])
	}
}
