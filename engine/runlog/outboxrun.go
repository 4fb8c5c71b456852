package runlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/store"
)

// RunEntry is a run's outbox entry (RunOutboxKey) decoded.
type RunEntry struct {
	RunID, TenantID string
	// From is the first run_seq it names.
	From uint64
}

// IsRunEntry reports whether a stored outbox entry is a run's entry
// (runcodec.OutboxRun) rather than one an older weftd wrote.
func IsRunEntry(value []byte) bool { return runcodec.IsOutboxRun(value) }

// ParseRunEntry decodes a run's outbox entry.
func ParseRunEntry(it store.Item) (RunEntry, error) {
	parts, err := store.SplitKey(it.Key)
	if err != nil || len(parts) != 3 || parts[0] != "ob" || parts[1] == "" || parts[2] != "" {
		return RunEntry{}, errors.New("outbox key is not ob:{run}:")
	}
	r, err := runcodec.DecodeOutboxRun(it.Value)
	if err != nil {
		return RunEntry{}, err
	}
	return RunEntry{RunID: parts[1], TenantID: r.TenantID, From: r.From}, nil
}

// RunRequest asks for a run's events from run_seq From on, to publish.
type RunRequest struct {
	RunID, TenantID string
	From            uint64
}

// ResolvedRun is the events a run's outbox entry names, from the run_seq
// asked for, in run_seq order, or why they could not be resolved.
type ResolvedRun struct {
	Events []OutboxEvent
	// Checkpoint is what deleting the entry must require of the run's
	// checkpoint: the version it had before the events were read (or its
	// absence), so that a decision that appended events since — which
	// rewrote it — makes the deletion fail.
	Checkpoint store.Condition
	// More says the run has more events than one call answers
	// (MaxRunEvents): the entry stays for the next.
	More bool
	Err  error
}

// MaxRunEvents bounds the event records ResolveRuns reads of one run: a
// run far behind is published over several passes.
const MaxRunEvents = 1024

// ResolveRuns answers, for each request, the run's events from its first
// run_seq on, through the last the run appended as its checkpoint read
// first says: the checkpoints are read in one call (store.GetMany), then
// each run's events are taken from the cache when it holds them at that
// checkpoint's version, else read from st. A run whose events cannot be
// resolved — undecodable, or one missing — answers its Err; an error
// reading the store fails the whole call. A nil cache holds nothing.
func (c *OutboxCache) ResolveRuns(ctx context.Context, st store.Store, reqs []RunRequest) ([]ResolvedRun, error) {
	out := make([]ResolvedRun, len(reqs))
	if len(reqs) == 0 {
		return out, nil
	}
	keys := make([][]byte, len(reqs))
	for i, q := range reqs {
		keys[i] = CheckpointKey(q.RunID)
	}
	found, err := store.GetMany(ctx, st, keys)
	if err != nil {
		return nil, fmt.Errorf("read the checkpoints of %d runs in the outbox: %w", len(reqs), err)
	}
	var r resolver
	r.buf = make([]byte, 0, 8<<10)
	for i, q := range reqs {
		out[i].Checkpoint = store.IfAbsent(keys[i])
		var version uint64
		if len(found) > 0 && string(found[0].Key) == string(keys[i]) {
			version = found[0].Version
			out[i].Checkpoint = store.IfVersion(keys[i], version)
			found = found[1:]
		}
		ref := outboxRef{tenantID: q.TenantID, runID: q.RunID, first: q.From}
		if values, ok := c.held(q.RunID, q.From, version); ok && version != 0 {
			e := r.resolveHeld(ref, values)
			out[i].Events, out[i].Err = e.Events, e.Err
			continue
		}
		if err := r.readRun(ctx, st, ref, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readRun reads the run's events from ref.first on from the store into
// res: the records after the one that ends before ref.first, up to
// MaxRunEvents of them. An event missing in between is the run's Err.
func (r *resolver) readRun(ctx context.Context, st store.Store, ref outboxRef, res *ResolvedRun) error {
	page, err := st.Scan(ctx, &store.ScanParams{Prefix: EventPrefix(ref.runID), After: EventKey(ref.runID, ref.first-1), Limit: MaxRunEvents})
	if err != nil {
		return fmt.Errorf("read the events of run %s from the outbox: %w", ref.runID, err)
	}
	res.More = page.Next != nil
	next := ref.first
	for _, it := range page.Items {
		err := runcodec.EachStoredEvent(it.Value, ref.runID, func(body []byte) error {
			e, err := r.event(ref, body)
			switch {
			case err != nil:
				return err
			case e.RunSeq < next:
				return nil // published already: an earlier event of the first record
			case e.RunSeq > next:
				return fmt.Errorf("run_seq %d is not stored", next)
			}
			res.Events = append(res.Events, e)
			next++
			return nil
		})
		if err != nil {
			*res = ResolvedRun{Checkpoint: res.Checkpoint, Err: fmt.Errorf("outbox entry's events from run_seq %d: %w", ref.first, err)}
			return nil
		}
	}
	return nil
}
