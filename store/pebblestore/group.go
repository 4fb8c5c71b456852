package pebblestore

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-dev/weft/store"
)

// lead takes the next group from the queue, commits it and hands the lead
// on. Only the leader runs it, so it alone touches s.seq and s.recent.
func (s *Store) lead() {
	g := s.queue.take()
	s.commitGroup(g)
	s.queue.handOff()
	for _, r := range g.reqs {
		r.wake <- struct{}{}
	}
}

// commitGroup decides every batch of g in arrival order, folds the accepted
// ones into one Pebble batch and applies it with one sync, leaving each
// request's outcome in its res and err. A batch whose conditions fail (or
// cannot be read) gets its own error and leaves the others alone. If the
// apply fails, every batch of the group gets an *OutcomeUnknownError.
func (s *Store) commitGroup(g *group) {
	s.stats.groups.Add(1)
	s.stats.batches.Add(uint64(len(g.reqs)))
	s.stats.noteGroup(len(g.reqs))
	batch := s.db.NewBatch()
	defer batch.Close()
	ov := overlay{}
	err := s.fold(g, batch, ov)
	var owed []heard
	if err == nil && !batch.Empty() {
		owed = s.watchers.owed(g)
	}
	close(g.folded)
	if err == nil && !batch.Empty() {
		err = s.apply(len(g.reqs), batch)
		s.remember(ov, err)
		notify(owed) // applied, or perhaps applied: a watcher must hear of it either way
	}
	if err != nil {
		for _, r := range g.reqs {
			r.res, r.err = nil, err
		}
	}
}

// fold decides each request of g and writes the accepted ones into batch and
// ov. A condition reads its key from ov (what earlier batches of the group
// wrote, so that it sees them as if they had been committed one by one), else
// from the recent versions, else from Pebble.
func (s *Store) fold(g *group, batch *pebble.Batch, ov overlay) error {
	stored := &conditionReader{db: s.db}
	lookup := func(key []byte) (bool, uint64, error) {
		if version, ok := ov[string(key)]; ok {
			return version != 0, version, nil
		}
		if found, version, held := s.recent.get(key); held {
			return found, version, nil
		}
		s.stats.storedReads.Add(1)
		return stored.lookup(key)
	}
	for _, r := range g.reqs {
		if r.err = store.CheckConditions(r.batch.Conditions, lookup); r.err != nil {
			continue
		}
		var err error
		if r.res, err = s.write(batch, r.batch.Ops, ov); err != nil {
			_ = stored.close()
			return err
		}
	}
	if err := stored.close(); err != nil {
		return err
	}
	if batch.Empty() {
		return nil
	}
	return translate(batch.Set(metaSeq, binary.BigEndian.AppendUint64(nil, s.seq), nil))
}

// remember records in the recent versions what a group wrote (ov), once its
// apply has returned err. An apply that failed may or may not have written,
// so then they forget every key.
func (s *Store) remember(ov overlay, err error) {
	if err != nil {
		s.recent.forget()
		return
	}
	for key, version := range ov {
		s.recent.note(key, version)
	}
}

// write adds ops to batch under the next version, and records them in ov.
// Each record is encoded straight into the batch's buffer.
func (s *Store) write(batch *pebble.Batch, ops []store.Op, ov overlay) (*store.CommitResult, error) {
	res := &store.CommitResult{Versions: make([]uint64, len(ops))}
	if len(ops) == 0 {
		return res, nil
	}
	// The counter advances even if the apply fails, so that a write whose
	// outcome is unknown can never share its version with a later one.
	s.seq++
	version := s.seq
	for i, op := range ops {
		var deferred *pebble.DeferredBatchOp
		switch {
		case op.Kind == store.OpDelete && op.Once:
			// A single delete: it and the one put it meets (in a flush,
			// if both are still in the memtables) both vanish, where a
			// tombstone would be carried to the bottom level.
			deferred = batch.SingleDeleteDeferred(recordKeyLen(op.Key))
			ov.note(op.Key, 0)
		case op.Kind == store.OpDelete:
			deferred = batch.DeleteDeferred(recordKeyLen(op.Key))
			ov.note(op.Key, 0)
		default:
			deferred = batch.SetDeferred(recordKeyLen(op.Key), recordValueLen(op.Value))
			putRecordValue(deferred.Value, version, op.Value)
			ov.note(op.Key, version)
			res.Versions[i] = version
		}
		putRecordKey(deferred.Key, op.Key)
		if err := deferred.Finish(); err != nil {
			return nil, translate(err)
		}
	}
	return res, nil
}

// apply commits the group's batch with one sync; n is the number of batches
// folded into it.
func (s *Store) apply(n int, batch *pebble.Batch) error {
	if s.beforeApply != nil {
		if err := s.beforeApply(n); err != nil {
			return &store.OutcomeUnknownError{Cause: err}
		}
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return &store.OutcomeUnknownError{Cause: translate(err)}
	}
	return nil
}

// overlay maps a key written by a group to its new version, 0 when deleted.
type overlay map[string]uint64

func (ov overlay) note(key []byte, version uint64) { ov[string(key)] = version }
