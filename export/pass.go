package export

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/store"
)

// pass is the state of one RunOnce.
type pass struct {
	w       *Worker
	now     time.Time
	retries map[string]versioned // by outbox key
	held    map[string]bool      // runs whose later entries wait this pass
	seen    map[string]bool      // outbox keys scanned (for orphaned retry records)
	acks    []ack
	stats   PassStats
	// keep is the first entry scanned that the pass did not publish (it
	// waits, failed, or was dead-lettered), last the last entry scanned.
	keep, last []byte
}

// ack is a published entry awaiting deletion.
type ack struct {
	key, retryKey []byte
	version       uint64
	hadRetry      bool
}

// page handles one page of outbox entries, in order.
func (p *pass) page(ctx context.Context, items []store.Item) error {
	for _, it := range items {
		p.stats.Seen++
		p.seen[string(it.Key)] = true
		p.last = it.Key
		published := len(p.acks)
		if err := p.entry(ctx, it); err != nil {
			return err
		}
		if len(p.acks) == published && p.keep == nil {
			p.keep = it.Key
		}
	}
	return nil
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

// entry handles one outbox entry.
func (p *pass) entry(ctx context.Context, it store.Item) error {
	run := runOf(it.Key)
	if p.held[run] {
		p.stats.Waiting++
		return nil
	}
	retry, hadRetry := p.retries[string(it.Key)]
	msg, err := decode(it.Value)
	if err != nil {
		return p.deadLetter(ctx, it, msg, ReasonUndecodable, retry, hadRetry, err)
	}
	if hadRetry && p.now.Before(retry.rec.NextAttemptAt) {
		p.held[run] = true
		p.stats.Waiting++
		return nil
	}
	err = p.publish(ctx, msg)
	switch {
	case err == nil:
		p.stats.Published++
		p.w.m.published.Inc()
		p.acks = append(p.acks, ack{key: it.Key, retryKey: retryKeyOf(it.Key), version: it.Version, hadRetry: hadRetry})
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, ErrUnavailable):
		p.w.m.publishErrors.WithLabelValues("unavailable").Inc()
		return err
	}
	p.w.m.publishErrors.WithLabelValues("rejected").Inc()
	p.held[run] = true
	return p.fail(ctx, it, msg, retry, hadRetry, err)
}

// publish publishes msg within the publish timeout; a timeout is the bus's.
func (p *pass) publish(ctx context.Context, msg Message) error {
	pctx, cancel := context.WithTimeout(ctx, p.w.cfg.PublishTimeout)
	defer cancel()
	err := p.w.pub.Publish(pctx, msg)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil && !errors.Is(err, ErrUnavailable) {
		err = Unavailable(fmt.Errorf("publish timed out after %s: %w", p.w.cfg.PublishTimeout, err))
	}
	return err
}

// fail records a failed publish, or dead-letters the entry after the last.
func (p *pass) fail(ctx context.Context, it store.Item, msg Message, retry versioned, hadRetry bool, cause error) error {
	rec := retry.rec
	rec.Attempts++
	if rec.Attempts >= p.w.cfg.MaxAttempts {
		return p.deadLetter(ctx, it, msg, ReasonMaxAttempts, versioned{rec: rec, version: retry.version}, hadRetry, cause)
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
	if _, err := p.w.st.Commit(ctx, b); err != nil {
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
// deletion of the entry and its retry record, and raises the alert.
func (p *pass) deadLetter(ctx context.Context, it store.Item, msg Message, reason string, retry versioned, hadRetry bool, cause error) error {
	first := retry.rec.FirstFailedAt
	if first.IsZero() {
		first = p.now
	}
	d := newDeadLetter(it.Key, it.Value, msg, reason, retry.rec.Attempts, truncateError(cause), first, p.now)
	b := &store.Batch{Conditions: []store.Condition{store.IfVersion(it.Key, it.Version)},
		Ops: []store.Op{store.Put(deadLetterKeyOf(it.Key), mustMarshal(d)), store.Delete(it.Key)}}
	if hadRetry {
		b.Ops = append(b.Ops, store.Delete(retryKeyOf(it.Key)))
	}
	_, err := p.w.st.Commit(ctx, b)
	if errors.Is(err, store.ErrOutcomeUnknown) {
		err = p.resolveGone(ctx, it.Key, err)
	}
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		return nil // another worker got there first
	case err != nil:
		return fmt.Errorf("export: dead-letter %s: %w", it.Key, err)
	}
	p.stats.DeadLettered++
	delete(p.held, runOf(it.Key)) // the run's later entries go on
	p.w.m.deliveryFailed.WithLabelValues(d.TenantID).Inc()
	p.w.log.Error("export: event moved to the dead-letter record", "alert", AlertDeliveryFailed,
		"tenant_id", d.TenantID, "run_id", d.RunID, "run_seq", d.RunSeq, "event_id", d.EventID,
		"event_type", d.EventType, "reason", reason, "attempts", d.Attempts, "last_error", d.LastError,
		"outbox_key", d.OutboxKey, "dead_letter_key", string(deadLetterKeyOf(it.Key)))
	return nil
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

// flush deletes the published entries: in one conditional batch, or one by
// one when another worker or a replay got to some of them first.
func (p *pass) flush(ctx context.Context) error {
	acks := p.acks
	p.acks = nil
	if len(acks) == 0 {
		return nil
	}
	b := &store.Batch{}
	for _, a := range acks {
		b.Conditions = append(b.Conditions, store.IfVersion(a.key, a.version))
		b.Ops = append(b.Ops, a.ops()...)
	}
	_, err := p.w.st.Commit(ctx, b)
	if err == nil || !errors.Is(err, store.ErrConditionFailed) {
		if err != nil {
			return fmt.Errorf("export: acknowledge %d published entries: %w", len(acks), err)
		}
		return nil
	}
	for _, a := range acks {
		b := &store.Batch{Conditions: []store.Condition{store.IfVersion(a.key, a.version)}, Ops: a.ops()}
		if _, err := p.w.st.Commit(ctx, b); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("export: acknowledge %s: %w", a.key, err)
		}
	}
	return nil
}

func (a ack) ops() []store.Op {
	ops := []store.Op{store.Delete(a.key)}
	if a.hadRetry {
		ops = append(ops, store.Delete(a.retryKey))
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
		if _, err := p.w.st.Commit(ctx, b); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("export: drop orphaned retry record %s: %w", rk, err)
		}
	}
	return nil
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
