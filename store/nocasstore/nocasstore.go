package nocasstore

import (
	"context"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// Store wraps another store and hides its conditional batches.
type Store struct {
	inner store.Store
	caps  store.Capabilities
}

var _ store.Store = (*Store)(nil)

// New returns a Store over a fresh in-memory store.
func New() *Store { return Wrap(memstore.New(memstore.Config{})) }

// Wrap returns a Store over inner, which it owns and closes.
func Wrap(inner store.Store) *Store {
	caps := inner.Capabilities()
	caps.Backend = "nocas(" + caps.Backend + ")"
	caps.ConditionalBatch = false
	return &Store{inner: inner, caps: caps}
}

// Capabilities implements store.Store: the inner capabilities without
// ConditionalBatch.
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	return s.inner.Get(ctx, key)
}

// Scan implements store.Store.
func (s *Store) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	return s.inner.Scan(ctx, p)
}

// Commit implements store.Store. A batch with conditions fails fast with a
// *store.CapabilityError naming conditionalBatch; nothing is written.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if err := store.ValidateBatch(b, s.caps); err != nil {
		return nil, err
	}
	return s.inner.Commit(ctx, b)
}

// Close implements store.Store.
func (s *Store) Close() error { return s.inner.Close() }
