package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/internal/reuse"
	"github.com/weft-dev/weft/store"
)

// pass is the state of one RunOnce.
type pass struct {
	w       *Worker
	now     time.Time
	retries map[string]versioned // by outbox key
	held    map[string]bool      // runs whose later entries wait this pass, by runKey
	seen    map[string]bool      // outbox keys scanned (for orphaned retry records)
	// runEntries are the runs' entries scanned (for the marks to keep).
	runEntries map[string]bool
	acks       []ack
	stats      PassStats
	// keep is the first entry scanned that the pass did not publish (it
	// waits, failed, or was dead-lettered), last the last entry scanned.
	keep, last []byte
	// mem is the memory the pass resolves and publishes its pages in.
	mem *pageMemory
}

// pageMemory is the memory a pass resolves and publishes a page in: the
// resolved entries and their events' JSON, the messages, the due entries.
// Each page writes over the last one's, which is done with by then: page
// publishes its due entries (and dead-letters the others) before it
// returns, flush acknowledges them from their keys and versions alone,
// and a publisher keeps nothing of a message once it returns (Publisher).
// A worker keeps one for its next pass; two passes at once never share one
// (Worker.takeMemory).
type pageMemory struct {
	outbox runlog.OutboxBuffers
	msgs   []Message // the page's messages, each entry's a full slice of it
	batch  []due
	hand   []Message // what one PublishBatch call is given
}

// ack is a published entry awaiting deletion.
type ack struct {
	key      []byte
	version  uint64
	hadRetry bool
	// run, for a run's entry, is what else its deletion requires and does;
	// advance, when set, is the entry to put instead of deleting it: the
	// run has more events than the pass read, to publish from the next.
	run     *runPart
	advance []byte
}

// due is an outbox entry the pass is to publish: the messages of the events
// it names, in run_seq order (one, those one decision appended, or, for a
// run's entry, the run's from the first not yet published).
type due struct {
	it       store.Item
	msgs     []Message
	retry    versioned
	hadRetry bool
	run      *runPart
}

// runPart is what the pass resolved of a run's entry (runlog.RunEntry).
type runPart struct {
	runID string
	// res is its events and the condition on the run's checkpoint its
	// deletion requires; err says the entry itself is undecodable.
	res runlog.ResolvedRun
	err error
	// covered are the run's older entries (ob:{run}:{run_seq}) whose
	// events the run's entry names too: deleted with it.
	covered []ack
}

// page handles one page of outbox entries, in order, except that a run's
// entry (ob:{run}:, which sorts first) comes after the run's older entries
// that name events before its own (runsOf). The entries due are published
// in that order, together when the publisher batches; an entry that cannot
// be decoded is dead-lettered after the due entries before it.
func (p *pass) page(ctx context.Context, items []store.Item) error {
	resolved, err := runlog.ResolveOutboxInto(ctx, p.w.st, items, &p.mem.outbox)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	order, runs, err := p.runsOf(ctx, items, resolved)
	if err != nil {
		return err
	}
	batch := reuse.Slice(&p.mem.batch, len(items), maxKept)[:0]
	pool := reuse.Slice(&p.mem.msgs, messagesIn(resolved, runs), maxKept) // the page's messages, in one piece of memory
	for _, it := range items {
		p.stats.Seen++
		if len(p.retries) > 0 { // only retry records can be orphaned
			p.seen[string(it.Key)] = true
		}
		p.last = it.Key
	}
	pending := 0 // the messages in batch
	for _, i := range order {
		it := items[i]
		run := runKey(it.Key)
		if p.held[string(run)] {
			p.wait(it.Key)
			continue
		}
		retry, hadRetry := p.retries[string(it.Key)]
		part := runs[i]
		var msgs []Message
		if part != nil {
			msgs, err = runMessagesOf(part, &pool)
		} else {
			msgs, err = messagesOf(resolved[i], &pool)
		}
		if err != nil {
			if err := p.publishDue(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]        // published: its memory is free again
			if p.held[string(run)] { // an earlier entry of its run was just refused
				p.wait(it.Key)
				continue
			}
			p.keepFrom(it.Key)
			if err := p.deadLetter(ctx, it, part, Message{}, nil, ReasonUndecodable, retry, hadRetry, err); err != nil {
				return err
			}
			continue
		}
		if hadRetry && p.now.Before(retry.rec.NextAttemptAt) {
			p.held[string(run)] = true
			p.wait(it.Key)
			continue
		}
		batch = append(batch, due{it: it, msgs: msgs, retry: retry, hadRetry: hadRetry, run: part})
		if pending += len(msgs); pending >= maxPageEvents {
			// A page of runs far behind holds many events: publish and
			// acknowledge them a part at a time, so that a worker stopped
			// mid-page has moved the outbox on.
			if err := p.publishDue(ctx, batch); err != nil {
				return err
			}
			if err := p.flush(ctx); err != nil {
				return err
			}
			batch, pending = batch[:0], 0
		}
	}
	return p.publishDue(ctx, batch)
}

// maxPageEvents is about how many events a page publishes before it
// acknowledges them.
const maxPageEvents = 512

// runsOf answers the order in which page handles items, and what it
// resolved of the runs' entries among them, by index. A run's entry is
// the first of its run's items (ob:{run}: sorts before ob:{run}:{run_seq});
// it is handled after the run's older entries that name events before its
// first run_seq, from the run_seq after theirs and after what this worker
// published of it already (marks), and the older entries that name events
// from its first run_seq on are covered by it (published and deleted with
// it), so that the run's events go out in run_seq order.
func (p *pass) runsOf(ctx context.Context, items []store.Item, resolved []runlog.ResolvedEntry) ([]int, map[int]*runPart, error) {
	order := make([]int, 0, len(items))
	var runs map[int]*runPart
	var reqs []runlog.RunRequest
	var at []int
	for i := 0; i < len(items); {
		run := runKey(items[i].Key)
		end := i + 1
		for end < len(items) && bytes.Equal(runKey(items[end].Key), run) {
			end++
		}
		if !isRunEntryKey(items[i].Key) || !runlog.IsRunEntry(items[i].Value) {
			for k := i; k < end; k++ {
				order = append(order, k)
			}
			i = end
			continue
		}
		if runs == nil {
			runs = map[int]*runPart{}
		}
		entry, err := runlog.ParseRunEntry(items[i])
		part := &runPart{runID: entry.RunID, err: err}
		runs[i] = part
		if p.runEntries == nil {
			p.runEntries = map[string]bool{}
		}
		p.runEntries[string(items[i].Key)] = true
		from := entry.From
		for k := i + 1; k < end; k++ {
			if seq, ok := seqOf(items[k].Key); ok && err == nil && seq >= entry.From {
				_, had := p.retries[string(items[k].Key)]
				part.covered = append(part.covered, ack{key: items[k].Key, version: items[k].Version, hadRetry: had})
				continue
			}
			order = append(order, k)
			if evs := resolved[k].Events; len(evs) > 0 {
				from = max(from, evs[len(evs)-1].RunSeq+1)
			}
		}
		order = append(order, i)
		if err == nil {
			if through, ok := p.w.marks.get(items[i].Key, items[i].Version); ok {
				from = max(from, through+1)
			}
			reqs = append(reqs, runlog.RunRequest{RunID: entry.RunID, TenantID: entry.TenantID, From: from})
			at = append(at, i)
		}
		i = end
	}
	if len(reqs) == 0 {
		return order, runs, nil
	}
	res, err := p.w.cfg.OutboxCache.ResolveRuns(ctx, p.w.st, reqs)
	if err != nil {
		return nil, nil, fmt.Errorf("export: %w", err)
	}
	for k, i := range at {
		runs[i].res = res[k]
	}
	return order, runs, nil
}

// wait counts an entry that waits for a later pass.
func (p *pass) wait(key []byte) {
	p.stats.Waiting++
	p.keepFrom(key)
}

// keepFrom notes an entry the pass leaves in the outbox: the first of them
// in key order is where the next pass may start (leftFrom).
func (p *pass) keepFrom(key []byte) {
	if p.keep == nil || bytes.Compare(key, p.keep) < 0 {
		p.keep = key
	}
}

// leftFrom answers, once the pass went through the whole outbox from from,
// a key below which it left no live entry: its first entry not published,
// else just past its last entry, else from.
func (p *pass) leftFrom(from []byte) []byte {
	switch {
	case p.keep != nil:
		return p.keep
	case p.last != nil:
		return after(p.last)
	default:
		return from
	}
}

// publishDue publishes the due entries in order. After a refusal, the
// entries of the refused one's run wait and the others are published still,
// as one entry at a time would have it; an unavailable bus ends the pass.
func (p *pass) publishDue(ctx context.Context, batch []due) error {
	for len(batch) > 0 {
		n, failed, err := p.publish(ctx, batch)
		for _, d := range batch[:n] {
			p.stats.Published += len(d.msgs)
			p.w.m.published.Add(int64(len(d.msgs)))
			a := ack{key: d.it.Key, version: d.it.Version, hadRetry: d.hadRetry, run: d.run}
			if d.run != nil {
				a.advance = p.publishedRun(d)
			}
			p.acks = append(p.acks, a)
		}
		batch = batch[n:]
		if len(batch) == 0 || err == nil {
			continue
		}
		if err := p.refused(ctx, batch[0], failed, err); err != nil {
			return err
		}
		rest := batch[1:]
		batch = nil
		for _, d := range rest {
			if p.held[string(runKey(d.it.Key))] {
				p.wait(d.it.Key)
				continue
			}
			batch = append(batch, d)
		}
	}
	return nil
}

// refused handles an entry the bus did not take whole (msg is the message
// it refused): an unavailable bus ends the pass; a refusal is recorded
// against the entry and holds back the later entries of its run. The
// entry's messages before msg were published, and will be again with it
// (at least once).
func (p *pass) refused(ctx context.Context, d due, msg Message, err error) error {
	p.keepFrom(d.it.Key)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, ErrUnavailable):
		p.w.m.publishErrors.WithLabelValues("unavailable").Inc()
		return err
	}
	p.w.m.publishErrors.WithLabelValues("rejected").Inc()
	p.held[string(runKey(d.it.Key))] = true
	return p.fail(ctx, d.it, d.run, msg, d.msgs, d.retry, d.hadRetry, err)
}

// publish hands the bus the messages of the first of batch, or of all of
// it when the publisher batches, within the publish timeout (a timeout is
// the bus's), and answers how many of batch's first entries were published
// whole and, when not all, the message of the next that was not and why.
func (p *pass) publish(ctx context.Context, batch []due) (int, Message, error) {
	pctx, cancel := context.WithTimeout(ctx, p.w.cfg.PublishTimeout)
	defer cancel()
	n, failed, err := p.hand(pctx, batch)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil && !errors.Is(err, ErrUnavailable) {
		err = Unavailable(fmt.Errorf("publish timed out after %s: %w", p.w.cfg.PublishTimeout, err))
	}
	return n, failed, err
}

// hand calls the publisher: once per message of the first entry, or once
// for every message of batch when it batches.
func (p *pass) hand(ctx context.Context, batch []due) (int, Message, error) {
	bp, ok := p.w.pub.(BatchPublisher)
	if !ok {
		for _, m := range batch[0].msgs {
			if err := p.w.pub.Publish(ctx, m); err != nil {
				return 0, m, err
			}
		}
		return 1, Message{}, nil
	}
	count := 0
	for _, d := range batch {
		count += len(d.msgs)
	}
	msgs := reuse.Slice(&p.mem.hand, count, maxKept)[:0]
	for _, d := range batch {
		msgs = append(msgs, d.msgs...)
	}
	n, err := bp.PublishBatch(ctx, msgs)
	switch {
	case n < 0 || n > len(msgs):
		n, err = 0, Unavailable(fmt.Errorf("the publisher answered %d published of %d", n, len(msgs)))
	case n < len(msgs) && err == nil:
		err = Unavailable(fmt.Errorf("the publisher published %d of %d messages and gave no error", n, len(msgs)))
	}
	if n == len(msgs) {
		return len(batch), Message{}, err
	}
	entries := 0 // the entries published whole
	for _, d := range batch {
		if n < len(d.msgs) {
			break
		}
		n -= len(d.msgs)
		entries++
	}
	return entries, batch[entries].msgs[n], err
}

// fail records a failed publish of msg, one of the entry's messages (all),
// or dead-letters the entry after the last.
func (p *pass) fail(ctx context.Context, it store.Item, part *runPart, msg Message, all []Message, retry versioned, hadRetry bool, cause error) error {
	rec := retry.rec
	rec.Attempts++
	if rec.Attempts >= p.w.cfg.MaxAttempts {
		return p.deadLetter(ctx, it, part, msg, all, ReasonMaxAttempts, versioned{rec: rec, version: retry.version}, hadRetry, cause)
	}
	if rec.FirstFailedAt.IsZero() {
		rec.FirstFailedAt = p.now.UTC()
	}
	rec.LastFailedAt = p.now.UTC()
	rec.LastError = truncateError(cause)
	next := p.w.cfg.delay(rec.Attempts)
	rec.NextAttemptAt = p.now.Add(next).UTC()
	rk := retryKeyOf(it.Key)
	cond := store.IfAbsent(rk)
	if hadRetry {
		cond = store.IfVersion(rk, retry.version)
	}
	b := &store.Batch{Conditions: []store.Condition{store.IfVersion(it.Key, it.Version), cond},
		Ops: []store.Op{store.Put(rk, mustMarshal(rec))}}
	if err := p.w.commit(ctx, commitRetry, b); err != nil {
		if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrOutcomeUnknown) {
			return nil // another worker moved on; the next pass re-reads
		}
		return fmt.Errorf("export: record failed publish of %s: %w", it.Key, err)
	}
	p.stats.Retried++
	p.w.log.Warn("export: publish failed; will retry", "run_id", msg.RunID, "run_seq", msg.RunSeq,
		"event_id", msg.EventID, "attempts", rec.Attempts, "next_attempt_at", rec.NextAttemptAt, "error", rec.LastError)
	return nil
}

// deadLetter moves an entry to its dead-letter record, in one batch with the
// deletion of the entry and its retry record, and raises the alert. msg is
// the message that failed and all the entry's messages, which the record
// keeps (none for an undecodable entry). A run's entry (part) is moved on
// condition that the run's checkpoint is as read (no event appended since,
// which the record would not hold), with the older entries it covers, to
// dlq:{run}:{run_seq} of the first event it holds: each is a record of its
// own, as each of a run's entries over time is.
func (p *pass) deadLetter(ctx context.Context, it store.Item, part *runPart, msg Message, all []Message, reason string, retry versioned, hadRetry bool, cause error) error {
	first := retry.rec.FirstFailedAt
	if first.IsZero() {
		first = p.now
	}
	d := newDeadLetter(it.Key, it.Value, msg, all, reason, retry.rec.Attempts, truncateError(cause), first, p.now)
	dlq := deadLetterKeyOf(it.Key)
	if part != nil && len(all) > 0 {
		dlq = DeadLetterKey(part.runID, all[0].RunSeq)
		d.OutboxKey = string(OutboxKey(part.runID, all[0].RunSeq))
	}
	b := &store.Batch{Conditions: []store.Condition{store.IfVersion(it.Key, it.Version)},
		Ops: []store.Op{store.Put(dlq, mustMarshal(d)), store.Delete(it.Key)}}
	if hadRetry {
		b.Ops = append(b.Ops, store.Delete(retryKeyOf(it.Key)))
	}
	if part != nil {
		b.Conditions, b.Ops = part.require(b.Conditions, b.Ops)
	}
	err := p.w.commit(ctx, commitDeadLetter, b)
	if errors.Is(err, store.ErrOutcomeUnknown) {
		err = p.resolveGone(ctx, it.Key, err)
	}
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		return nil // another worker got there first, or the run appended events
	case err != nil:
		return fmt.Errorf("export: dead-letter %s: %w", it.Key, err)
	}
	if part != nil {
		p.w.marks.drop(it.Key)
		p.w.cfg.OutboxCache.Exported(part.runID)
	}
	p.stats.DeadLettered++
	delete(p.held, string(runKey(it.Key))) // the run's later entries go on
	p.w.m.deliveryFailed.WithLabelValues(d.TenantID).Inc()
	p.w.log.Error("export: event moved to the dead-letter record", "alert", AlertDeliveryFailed,
		"tenant_id", d.TenantID, "run_id", d.RunID, "run_seq", d.RunSeq, "event_id", d.EventID,
		"event_type", d.EventType, "reason", reason, "attempts", d.Attempts, "last_error", d.LastError,
		"outbox_key", d.OutboxKey, "dead_letter_key", string(dlq))
	return nil
}

// require appends what deleting a run's entry requires besides the
// entry's own version — the run's checkpoint as read, the covered older
// entries at their versions — and the deletion of those entries and their
// retry records.
func (r *runPart) require(conds []store.Condition, ops []store.Op) ([]store.Condition, []store.Op) {
	if r.res.Checkpoint.Key != nil {
		conds = append(conds, r.res.Checkpoint)
	}
	for _, a := range r.covered {
		conds = append(conds, store.IfVersion(a.key, a.version))
		ops = a.ops(ops)
	}
	return conds, ops
}

// publishedRun notes that the messages of a run's entry were published:
// the worker's mark of the run moves past them, and the outbox cache
// drops them. When the run has more events than the pass read, it answers
// the entry to put in its place, from the run_seq after the last
// published, so that a run far behind moves on even across restarts; else
// nil: the entry may go.
func (p *pass) publishedRun(d due) []byte {
	n := len(d.msgs)
	if n == 0 {
		return nil
	}
	through := d.msgs[n-1].RunSeq
	p.w.marks.set(d.it.Key, d.it.Version, through)
	p.w.cfg.OutboxCache.Published(d.run.runID, through)
	if !d.run.res.More {
		return nil
	}
	return runcodec.AppendOutboxRun(nil, runcodec.OutboxRun{TenantID: d.msgs[0].TenantID, From: through + 1})
}

// resolveGone settles an ambiguous commit that deleted key: it happened if
// key is gone, and did not (a condition failure, to retry later) otherwise.
func (p *pass) resolveGone(ctx context.Context, key []byte, cause error) error {
	_, err := p.w.st.Get(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err == nil:
		return fmt.Errorf("%w (resolved: not applied): %w", store.ErrConditionFailed, cause)
	default:
		return cause
	}
}

// flush deletes the published entries in one conditional batch. When
// another worker or a replay got to some of them first, it reads which are
// still as the pass read them and deletes those in one more batch, and only
// if that loses a race too, one by one. Entries found gone mean another
// worker is going through the same entries: the pass is Overtaken.
func (p *pass) flush(ctx context.Context) error {
	acks := p.acks
	p.acks = acks[:0] // for the next page's, which come once these are done
	if len(acks) == 0 {
		return nil
	}
	err := p.acknowledge(ctx, acks)
	if errors.Is(err, store.ErrConditionFailed) {
		if acks, err = p.stillAsRead(ctx, acks); err == nil {
			err = p.acknowledge(ctx, acks)
		}
	}
	if !errors.Is(err, store.ErrConditionFailed) {
		return err
	}
	for _, a := range acks {
		err := p.acknowledge(ctx, []ack{a})
		switch {
		case errors.Is(err, store.ErrConditionFailed):
			p.keepFrom(a.key) // it may still be there
		case err != nil:
			return err
		}
	}
	return nil
}

// acknowledge deletes acks in one batch, conditional on every entry's
// version as read.
func (p *pass) acknowledge(ctx context.Context, acks []ack) error {
	if len(acks) == 0 {
		return nil
	}
	b := &store.Batch{Conditions: make([]store.Condition, 0, len(acks)), Ops: make([]store.Op, 0, len(acks))}
	for _, a := range acks {
		b.Conditions = append(b.Conditions, store.IfVersion(a.key, a.version))
		switch {
		case a.advance != nil:
			b.Ops = append(b.Ops, store.Put(a.key, a.advance))
			if a.hadRetry {
				b.Ops = append(b.Ops, store.Delete(retryKeyOf(a.key)))
			}
		case a.run != nil:
			b.Ops = a.ops(b.Ops)
			b.Conditions, b.Ops = a.run.require(b.Conditions, b.Ops)
		default:
			b.Ops = a.ops(b.Ops)
		}
	}
	if err := p.w.commit(ctx, commitAcknowledge, b); err != nil {
		return fmt.Errorf("export: acknowledge %d published entries: %w", len(acks), err)
	}
	for _, a := range acks {
		if a.run != nil {
			p.w.marks.drop(a.key)
		}
		if a.run != nil && a.advance == nil {
			p.w.cfg.OutboxCache.Exported(a.run.runID)
		}
	}
	return nil
}

// stillAsRead answers the acks whose entries are still at the version the
// pass read — and, for a run's entry, whose run's checkpoint is too: else a
// decision appended events since, which the next pass publishes — in one
// read, and notes whether some were gone.
func (p *pass) stillAsRead(ctx context.Context, acks []ack) ([]ack, error) {
	keys := make([][]byte, 0, len(acks))
	for _, a := range acks {
		keys = append(keys, a.key)
		if a.checksCheckpoint() {
			keys = append(keys, a.run.res.Checkpoint.Key)
		}
	}
	found, err := store.GetMany(ctx, p.w.st, keys)
	if err != nil {
		return nil, fmt.Errorf("export: re-read %d published entries: %w", len(acks), err)
	}
	// found is in the order of keys, absent keys left out
	take := func(key []byte) (uint64, bool) {
		if len(found) == 0 || !bytes.Equal(found[0].Key, key) {
			return 0, false
		}
		v := found[0].Version
		found = found[1:]
		return v, true
	}
	live := acks[:0]
	for _, a := range acks {
		v, ok := take(a.key)
		still := ok && v == a.version
		if !ok {
			p.stats.Overtaken = true // acknowledged by another worker
		}
		if a.checksCheckpoint() {
			cv, cok := take(a.run.res.Checkpoint.Key)
			still = still && a.run.res.Checkpoint.Holds(cok, cv)
		}
		switch {
		case still:
			live = append(live, a)
		case ok:
			// Still there (a run's entry whose run appended events since,
			// or an entry written again): the pass leaves it, and the next
			// starts no later than it.
			p.keepFrom(a.key)
		}
	}
	return live, nil
}

// checksCheckpoint reports whether the ack requires the run's checkpoint
// as read: a run's entry deleted.
func (a ack) checksCheckpoint() bool {
	return a.run != nil && a.advance == nil && a.run.res.Checkpoint.Key != nil
}

// ops appends the deletions of the entry and, if it had one, its retry record.
func (a ack) ops(ops []store.Op) []store.Op {
	ops = append(ops, store.Delete(a.key))
	if a.hadRetry {
		ops = append(ops, store.Delete(retryKeyOf(a.key)))
	}
	return ops
}

// dropOrphans deletes retry records whose outbox entry is gone (a worker
// recorded a failure while another acknowledged the entry).
func (p *pass) dropOrphans(ctx context.Context) error {
	for key, r := range p.retries {
		if p.seen[key] {
			continue
		}
		rk := retryKeyOf([]byte(key))
		b := &store.Batch{Conditions: []store.Condition{store.IfVersion(rk, r.version), store.IfAbsent([]byte(key))},
			Ops: []store.Op{store.Delete(rk)}}
		if err := p.w.commit(ctx, commitOrphan, b); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("export: drop orphaned retry record %s: %w", rk, err)
		}
	}
	return nil
}

// maxKept bounds each slice of a pageMemory: a page of very many events
// is published from memory of its own.
const maxKept = 1 << 14

// runKey answers what tells an outbox key's run from the others': the key
// without its last component, ob:{run} as stored, when it is the engine's
// ob:{run}: or ob:{run}:{run_seq}, else the whole key. It allocates nothing, so that
// the pass looks each entry's run up in its maps as string(runKey(key)).
func runKey(key []byte) []byte {
	if bytes.Count(key, []byte{store.Separator}) != 2 {
		return key
	}
	return key[:bytes.LastIndexByte(key, store.Separator)]
}

// isRunEntryKey reports whether an outbox key is a run's entry's,
// ob:{run}: (its last component empty).
func isRunEntryKey(key []byte) bool {
	return bytes.Count(key, []byte{store.Separator}) == 2 && key[len(key)-1] == store.Separator
}

// seqOf answers the run_seq an older entry's key ob:{run}:{run_seq} names.
func seqOf(key []byte) (uint64, bool) {
	if bytes.Count(key, []byte{store.Separator}) != 2 {
		return 0, false
	}
	seq, err := store.ParseUint64(string(key[bytes.LastIndexByte(key, store.Separator)+1:]))
	return seq, err == nil
}

// runOf answers the run an outbox key belongs to (the whole key when it is
// not the engine's ob:{run}:{run_seq}).
func runOf(key []byte) string {
	parts, err := store.SplitKey(key)
	if err != nil || len(parts) != 3 {
		return string(key)
	}
	return parts[1]
}
