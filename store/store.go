package store

import (
	"context"
	"errors"
)

// Store is the storage contract. Implementations are safe for concurrent use
// by multiple goroutines. Every method honours ctx.
//
// Keys and values passed in are not retained: a backend copies what it keeps.
// Keys and values returned are owned by the caller.
type Store interface {
	// Capabilities reports what this backend guarantees. It never changes for
	// the lifetime of a store.
	Capabilities() Capabilities

	// Get returns the current value and version of key, or an error wrapping
	// ErrNotFound when the key is absent.
	Get(ctx context.Context, key []byte) (Item, error)

	// Scan returns, in ascending byte order of their keys, up to params.Limit
	// items within the prefix or range that params selects. One call returns
	// a consistent view: never part of a batch. Successive pages (resumed
	// with ScanResult.Next) are each consistent but not one snapshot.
	Scan(ctx context.Context, params *ScanParams) (*ScanResult, error)

	// Commit applies batch atomically: every condition holds and every
	// operation is applied, or nothing is. A batch with conditions fails with
	// a *CapabilityError on a backend without Capabilities.ConditionalBatch.
	// A failed condition returns a *ConditionFailedError naming the key and
	// the version found. An ambiguous commit returns an *OutcomeUnknownError.
	Commit(ctx context.Context, batch *Batch) (*CommitResult, error)

	// Close releases the store. Calls after Close fail with ErrClosed.
	Close() error
}

// Capabilities is what a backend declares about itself. The four booleans are
// the capabilities of docs/semantics.md#capabilities-fail-fast; the rest describes the backend so that
// callers and diagnostics need not guess.
type Capabilities struct {
	// Backend names the backend ("memory", "pebble", "sql/postgresql", …)
	// for diagnostics such as a CheckpointOwnershipCapabilityError.
	Backend string
	// ConditionalBatch: Commit honours Batch.Conditions atomically with the
	// batch's operations (linearizable compare-and-set). The only capability
	// that is gated at run time.
	ConditionalBatch bool
	// AtomicBatch: a batch's operations are applied all together or not at
	// all, and no reader ever sees part of one.
	AtomicBatch bool
	// ReadAfterWrite: once Commit returns successfully, every later Get and
	// Scan on this store observes the batch.
	ReadAfterWrite bool
	// ScanConsistency: one Scan call returns a consistent view, never a
	// partially applied batch.
	ScanConsistency bool
	// Durable: a successful Commit survives a crash of the process (and of the
	// machine, to the extent the medium honours fsync).
	Durable bool
	// MaxValueBytes is the largest value Commit accepts.
	MaxValueBytes int
}

// Item is one stored record.
type Item struct {
	Key     []byte
	Value   []byte
	Version uint64
}

// OpKind says what an Op does.
type OpKind uint8

const (
	// OpPut writes Op.Value under Op.Key, creating or replacing it.
	OpPut OpKind = iota + 1
	// OpDelete removes Op.Key. Deleting an absent key is not an error.
	OpDelete
)

// String names the kind.
func (k OpKind) String() string {
	switch k {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	default:
		return "invalid"
	}
}

// Op is one write in a Batch. Build it with Put, Delete or DeleteOnce.
type Op struct {
	Kind  OpKind
	Key   []byte
	Value []byte
	// Once, on a delete (DeleteOnce), is the caller's promise that the key
	// was put at most once since it was last absent: no put, one put, never
	// two. A backend may then remove the key in a cheaper way (the Pebble
	// store uses a single delete, which vanishes with the put it meets
	// instead of travelling to the bottom of the LSM), and one that cannot
	// treats it as a plain delete. A broken promise may bring back an older
	// value of the key, so a caller sets it only where every put of the key
	// is provably followed by a delete before the next put. Meaningless on a
	// put.
	Once bool
}

// Put returns an operation that writes value under key.
func Put(key, value []byte) Op { return Op{Kind: OpPut, Key: key, Value: value} }

// Delete returns an operation that removes key.
func Delete(key []byte) Op { return Op{Kind: OpDelete, Key: key} }

// DeleteOnce returns an operation that removes key, a key the caller
// promises was put at most once since it was last absent (Op.Once). Every
// backend answers it as it answers Delete.
func DeleteOnce(key []byte) Op { return Op{Kind: OpDelete, Key: key, Once: true} }

// ConditionKind says what a Condition requires of its key.
type ConditionKind uint8

const (
	// CondAbsent requires that the key does not exist.
	CondAbsent ConditionKind = iota + 1
	// CondPresent requires that the key exists, at any version.
	CondPresent
	// CondVersion requires that the key exists at exactly Condition.Version.
	CondVersion
)

// String names the kind.
func (k ConditionKind) String() string {
	switch k {
	case CondAbsent:
		return "absent"
	case CondPresent:
		return "present"
	case CondVersion:
		return "version"
	default:
		return "invalid"
	}
}

// Condition is a precondition on one key, checked atomically with the batch
// that carries it. Build it with IfAbsent, IfPresent or IfVersion.
type Condition struct {
	Kind    ConditionKind
	Key     []byte
	Version uint64
}

// IfAbsent requires that key does not exist.
func IfAbsent(key []byte) Condition { return Condition{Kind: CondAbsent, Key: key} }

// IfPresent requires that key exists.
func IfPresent(key []byte) Condition { return Condition{Kind: CondPresent, Key: key} }

// IfVersion requires that key exists at exactly version.
func IfVersion(key []byte, version uint64) Condition {
	return Condition{Kind: CondVersion, Key: key, Version: version}
}

// Holds reports whether the condition is satisfied by a key that was found
// (or not) at version.
func (c Condition) Holds(found bool, version uint64) bool {
	switch c.Kind {
	case CondAbsent:
		return !found
	case CondPresent:
		return found
	case CondVersion:
		return found && version == c.Version
	default:
		return false
	}
}

// Batch is an all-or-nothing unit of writes, optionally guarded by
// conditions. A batch without conditions is an atomic batch; with conditions
// it is a conditional batch. A key may appear at most once among Ops and at
// most once among Conditions (a key may be both conditioned and written).
// A batch may hold only conditions: it then commits nothing but proves they
// held at one instant.
type Batch struct {
	Conditions []Condition
	Ops        []Op
}

// CommitResult is what a successful Commit returns.
type CommitResult struct {
	// Versions holds, for each Op in the batch (same index), the key's new
	// version; 0 for deletes. Callers chain compare-and-set with it without
	// re-reading.
	Versions []uint64
}

// ScanParams selects what Scan returns. Set Prefix, or Start and/or End, not
// both; with neither, the scan covers every key.
type ScanParams struct {
	// Prefix selects keys that begin with it.
	Prefix []byte
	// Start is the inclusive lower bound of a range scan (nil: from the first key).
	Start []byte
	// End is the exclusive upper bound of a range scan (nil: to the last key).
	End []byte
	// After resumes a scan: only keys strictly greater than After are
	// returned. Pass the previous page's ScanResult.Next.
	After []byte
	// Limit is the most items returned; 0 means DefaultScanLimit. It may not
	// exceed MaxScanLimit.
	Limit int
}

// ScanResult is one page of a scan.
type ScanResult struct {
	// Items in ascending key order.
	Items []Item
	// Next is non-nil when more items may follow: pass it as
	// ScanParams.After, with the same Prefix or range, to continue.
	Next []byte
}

// GroupStats counts a store's group commits since it opened: how many groups
// (each one transaction or one synced write) carried how many Commit calls,
// and how often a group's transaction restarted after a conflict.
// Batches/Groups is the mean group size; Retries/Groups the share of groups
// another writer made start again.
type GroupStats struct {
	Groups  uint64
	Batches uint64
	Retries uint64
}

// GroupCommitter is a store that commits concurrent callers' batches in
// groups and counts them (the Pebble and SQL stores). weftd serves the counts
// on /metrics.
type GroupCommitter interface {
	GroupStats() GroupStats
}

// MultiGetter is a store that reads many keys in one call: one round trip
// on a SQL store. GetMany answers an item for each key found, in the order
// of keys; an absent key answers none. One call is a consistent view.
type MultiGetter interface {
	GetMany(ctx context.Context, keys [][]byte) ([]Item, error)
}

// GetMany reads keys from st in one call when st is a MultiGetter, else one
// Get at a time; it answers what MultiGetter.GetMany answers (in order, the
// absent keys left out), though the Gets are each their own view.
func GetMany(ctx context.Context, st Store, keys [][]byte) ([]Item, error) {
	if mg, ok := st.(MultiGetter); ok {
		return mg.GetMany(ctx, keys)
	}
	out := make([]Item, 0, len(keys))
	for _, k := range keys {
		it, err := st.Get(ctx, k)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}
