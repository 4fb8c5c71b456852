package sqlstore

// hooks let tests step into a group's transaction; all are nil in
// production.
type hooks struct {
	// afterRead runs in every attempt of a group's transaction, after the
	// condition keys were locked and read and before the writes, with the
	// number of batches the transaction decides and the attempt (from 1).
	// An error from it fails the attempt.
	afterRead func(batches, attempt int) error
}
