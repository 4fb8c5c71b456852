package engine

import (
	"context"
	"errors"

	"github.com/weft-dev/weft/store"
)

// expireSignals removes the accepted-response records whose retention has
// passed, with their payloads — but only where that is safe (spec 003's
// cleanup rule): a signal the run has not consumed yet keeps its payload and
// record until the run consumes it or ends. Each removal is a change to the
// run, so it is fenced like every other write to it.
func (e *Engine) expireSignals(ctx context.Context) error {
	start, end := signalExpiryRange(e.now())
	res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 256})
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range res.Items {
		parts, err := store.SplitKey(it.Key)
		if err != nil || len(parts) != 5 {
			continue // not ours to judge: leave what we cannot read
		}
		errs = append(errs, e.expireSignal(ctx, it.Key, parts[2], parts[3], parts[4]))
	}
	return errors.Join(errs...)
}

// expireSignal removes one expired signal's records, when safe.
func (e *Engine) expireSignal(ctx context.Context, indexKey []byte, runID, name, id string) error {
	err := e.drive(ctx, runID, func(ch *change) error {
		ch.require(store.IfPresent(indexKey))
		ch.del(indexKey)
		for _, p := range ch.state.Signals {
			if p.Name == name && p.ID == id && !ch.state.Status.Terminal() {
				// Still waiting to be consumed: look again one retention later.
				ch.ops = append(ch.ops, store.Put(signalExpiryKey(ch.now.Add(e.cfg.SignalRetention), runID, name, id), nil))
				return nil
			}
		}
		ch.del(signalAcceptedKey(runID, name, id))
		ch.del(signalKey(runID, name, id))
		return nil
	})
	var cf *store.ConditionFailedError
	switch {
	case errors.As(err, &cf):
		return nil // removed elsewhere
	case CodeOf(err) == CodeNotFound:
		_, err := e.commit(ctx, &store.Batch{Ops: []store.Op{store.Delete(indexKey)}}) // the run is gone
		return err
	}
	return err
}
