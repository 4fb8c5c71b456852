package sqlstore

import "context"

// hooks let tests step into a group's transaction; all are nil in
// production.
type hooks struct {
	// afterRead runs in every attempt of a group's transaction, after the
	// condition keys were locked and read and before the writes, with the
	// number of batches the transaction decides and the attempt (from 1).
	// An error from it fails the attempt. While it is set every group takes
	// the two-round-trip path (pipelineGroup), which has that moment.
	afterRead func(batches, attempt int) error
	// beforeAttempt runs at the start of every attempt of a group's
	// transaction, before it begins, with the same arguments. It leaves the
	// group on its path.
	beforeAttempt func(batches, attempt int) error
	// beforeRead runs before every attempt of a Get, GetMany or Scan, with
	// the attempt (from 1); an error from it is that attempt's.
	beforeRead func(attempt int) error
	// afterSend runs once a group's COMMIT has been sent (in one round trip
	// or in the second of two; on CockroachDB's path the Sync of its
	// implicit transaction, or RELEASE and COMMIT) and before its answer is
	// read, with the
	// transaction's context and the backend process that runs it.
	afterSend func(ctx context.Context, pid uint32)
}

// sent runs the afterSend hook, if any.
func (h *hooks) sent(ctx context.Context, pid uint32) {
	if h.afterSend != nil {
		h.afterSend(ctx, pid)
	}
}
